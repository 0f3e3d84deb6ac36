// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! Names of ABI values, taken from the constants' names in `uapi/srnic.h`
//! (`SRNIC_MPA_RTR_READ` is `rtr-read`) instead of lists kept here.

use srnic_uapi as abi;

/// `RTR_READ` as `rtr-read`.
pub(crate) fn display_name(abi_name: &str) -> String {
    abi_name.to_ascii_lowercase().replace('_', "-")
}

/// The names of the bits set in `bits`, in bit order, each the display name of
/// the constant `prefix...` with that value; unknown bits as `bitN`.
pub(crate) fn bit_names(prefix: &'static str, bits: u64) -> Vec<String> {
    (0..64)
        .map(|b| 1u64 << b)
        .filter(|bit| bits & bit != 0)
        .map(|bit| match abi::name_of(prefix, bit) {
            Some(n) => display_name(n),
            None => format!("bit{}", bit.trailing_zeros()),
        })
        .collect()
}

/// An enum over one group of ABI constants, each variant written once next to
/// its constant: the conversions both ways, a variant `Unknown(u32)` for values
/// the library does not know, and `Display`: the given text, or else the
/// constant's name without `prefix` (`SRNIC_EVENT_CONNECT_REQUEST` in the group
/// `"SRNIC_EVENT_"` is `connect-request`).
macro_rules! abi_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident: $prefix:literal, unknown $unknown:literal {
            $(
                $(#[$vmeta:meta])*
                $v:ident = $c:ident $(=> $text:literal)?,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $(
                $(#[$vmeta])*
                #[doc = concat!("(`", stringify!($c), "`)")]
                $v,
            )*
            /// A value this library does not know.
            Unknown(u32),
        }

        impl From<u32> for $name {
            fn from(v: u32) -> Self {
                match v {
                    $(abi::$c => Self::$v,)*
                    v => Self::Unknown(v),
                }
            }
        }

        impl From<$name> for u32 {
            fn from(k: $name) -> u32 {
                match k {
                    $($name::$v => abi::$c,)*
                    $name::Unknown(v) => v,
                }
            }
        }

        impl $name {
            /// The name of the ABI constant (`SRNIC_...`); `None` for `Unknown`.
            pub fn abi_name(self) -> Option<&'static str> {
                match self {
                    $(Self::$v => Some(stringify!($c)),)*
                    Self::Unknown(_) => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self {
                    $(Self::$v => {
                        let text: Option<&str> = None $(.or(Some($text)))?;
                        match text {
                            Some(t) => f.write_str(t),
                            None => f.write_str(&$crate::names::display_name(
                                &stringify!($c)[$prefix.len()..],
                            )),
                        }
                    })*
                    Self::Unknown(v) => write!(f, $unknown, v),
                }
            }
        }
    };
}
