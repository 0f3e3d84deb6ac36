// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! The ABI of `/dev/srnic`, generated from `uapi/srnic.h`.
//!
//! The header is the one definition. `scripts/gen-uapi.sh` runs bindgen on it
//! and writes `generated.rs`: every structure (`srnic_wc`, with the Rust name
//! [`SrnicWc`] as an alias), every integer constant (`SRNIC_*`, u64 where the C
//! expression is 64 bits wide), the ioctl numbers from the header's `_IOWR`
//! lines, and two table macros, [`srnic_abi_structs!`] and [`srnic_abi_consts!`].
//! `make check-host` fails when the committed file is not what the header gives.
//!
//! This file adds what is derived from those tables rather than written again:
//! `Default` (all zero) for every structure, a compile-time proof that no
//! structure has padding (which the kernel's `FromBytes`/`AsBytes` rely on), the
//! table of constants by name ([`CONSTANTS`]) and the names of the counters and
//! limits. `uapi/tests/c_header.rs` compares every size, offset and constant
//! with what the C compiler makes of the header.

#[allow(
    missing_docs,
    non_camel_case_types,
    clippy::missing_safety_doc,
    clippy::useless_transmute
)]
#[macro_use]
#[path = "generated.rs"]
mod generated;
pub use generated::*;

/// The C types bindgen refers to: `char` (interface names) is a byte, as in
/// the kernel, which is built with `-funsigned-char`.
#[allow(non_camel_case_types)]
mod ctypes {
    pub(crate) type c_char = u8;
}

/// Encodes an ioctl command number the way `_IOC` in `<asm-generic/ioctl.h>` does.
pub const fn ioc(dir: u32, ty: u32, nr: u32, size: usize) -> u32 {
    // The size field is 14 bits wide; every srnic argument structure is far smaller.
    (dir << 30) | ((size as u32 & 0x3fff) << 16) | (ty << 8) | nr
}

/// `_IOC_READ | _IOC_WRITE`.
pub const IOC_READ_WRITE: u32 = 3;

/// Encodes `_IOWR(SRNIC_IOCTL_MAGIC, nr, T)`.
pub const fn iowr<T>(nr: u32) -> u32 {
    ioc(
        IOC_READ_WRITE,
        SRNIC_IOCTL_MAGIC,
        nr,
        core::mem::size_of::<T>(),
    )
}

/// The index arithmetic of `struct srnic_cq_ring`, for srnic and for pollers
/// alike: `prod` and `cons` count completions modulo `2 * cqe`, and index `i`
/// is entry `i % cqe` (uapi/srnic.h).
#[derive(Clone, Copy, Debug)]
pub struct CqRingIndex {
    cqe: core::num::NonZeroU32,
    /// `2 * cqe`, the indices' modulus.
    wrap: core::num::NonZeroU64,
}

impl CqRingIndex {
    /// The arithmetic of a ring of `cqe` entries (1 to `u32::MAX / 2`).
    pub fn new(cqe: u32) -> Option<Self> {
        if cqe > u32::MAX / 2 {
            return None;
        }
        Some(Self {
            cqe: core::num::NonZeroU32::new(cqe)?,
            wrap: core::num::NonZeroU64::new(u64::from(cqe) * 2)?,
        })
    }

    /// The capacity.
    pub fn cqe(self) -> u32 {
        self.cqe.get()
    }

    /// How many completions a ring with these indices holds; `None` when an
    /// index is not below `2 * cqe` or the ring would hold more than `cqe`.
    pub fn held(self, prod: u32, cons: u32) -> Option<u32> {
        let (prod, cons) = (u64::from(prod), u64::from(cons));
        if prod >= self.wrap.get() || cons >= self.wrap.get() {
            return None;
        }
        let n = (prod + self.wrap.get() - cons) % self.wrap;
        u32::try_from(n).ok().filter(|&n| n <= self.cqe.get())
    }

    /// Index `i` moved on by `n`.
    pub fn advance(self, i: u32, n: u32) -> u32 {
        // Below `2 * cqe`, which fits a u32.
        ((u64::from(i) + u64::from(n)) % self.wrap) as u32
    }

    /// The entry (0 to `cqe - 1`) of index `i`.
    pub fn slot(self, i: u32) -> usize {
        (i % self.cqe) as usize
    }
}

/// The all-zero value of an ABI field or structure.
trait Zero {
    const ZERO: Self;
}

macro_rules! zero_ints {
    ($($t:ty),*) => {$(
        impl Zero for $t {
            const ZERO: Self = 0;
        }
    )*};
}
zero_ints!(u8, u16, u32, u64, i8, i16, i32, i64);

impl<T: Zero, const N: usize> Zero for [T; N] {
    const ZERO: Self = [T::ZERO; N];
}

/// The size of the field `f` selects, in a constant expression.
const fn field_size<S, F>(_f: fn(&S) -> &F) -> usize {
    core::mem::size_of::<F>()
}

/// For every structure: `Default` (all zero; also what the kernel answers in
/// fields it does not fill), and a compile-time assertion that its fields, in
/// order, cover it without a gap or a tail of padding.
macro_rules! structure {
    ($r:ident, $c:ident, [$($f:ident),* $(,)?]) => {
        impl Zero for $c {
            const ZERO: Self = Self { $($f: Zero::ZERO),* };
        }

        impl Default for $c {
            fn default() -> Self {
                Self::ZERO
            }
        }

        const _: () = {
            let mut end = 0;
            $(
                assert!(
                    core::mem::offset_of!($c, $f) == end,
                    concat!("padding before ", stringify!($c), ".", stringify!($f))
                );
                end += field_size(|s: &$c| &s.$f);
            )*
            assert!(
                end == core::mem::size_of::<$c>(),
                concat!("padding at the end of ", stringify!($c))
            );
        };
    };
}
srnic_abi_structs!(structure);

/// One integer constant of the ABI: its name in `srnic.h` and its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constant {
    /// The macro's name, `SRNIC_...`.
    pub name: &'static str,
    /// Its value.
    pub value: u64,
}

macro_rules! constants {
    ($($c:ident),* $(,)?) => {
        /// Every integer constant of `srnic.h` (ioctl numbers included), in
        /// header order.
        pub const CONSTANTS: &[Constant] = &[$(Constant {
            name: stringify!($c),
            value: $c as u64,
        }),*];
    };
}
srnic_abi_consts!(constants);

/// The constants whose names start with `prefix` (say `"SRNIC_CAP_"`), in
/// header order.
pub fn constants(prefix: &'static str) -> impl Iterator<Item = &'static Constant> {
    CONSTANTS.iter().filter(move |c| c.name.starts_with(prefix))
}

/// The name, without `prefix`, of the constant named `prefix...` whose value is
/// `value` (say `"MPA_CRC"` for `("SRNIC_CAP_", SRNIC_CAP_MPA_CRC)`).
pub fn name_of(prefix: &'static str, value: u64) -> Option<&'static str> {
    constants(prefix)
        .find(|c| c.value == value)
        .map(|c| &c.name[prefix.len()..])
}

/// Named values of a structure: the counters of the `*_stats` structures and the
/// limits of `srnic_query_device`, each field between the structure's header
/// fields and its `reserved` tail, by name in ABI order. The RMPP and VMTP
/// counters are named with an `rmpp_` or `vmtp_` prefix (as `srnic stats`
/// prints them).
macro_rules! named_values {
    // Dispatch: which structures, what comes before the values, the names.
    (SrnicStats, $c:ident, [size, reserved0, $($rest:tt)*]) => {
        named_values!(@ SrnicStats counters COUNTER_NAMES "" [] $($rest)*);
    };
    (SrnicRmppStats, $c:ident, [size, reserved0, $($rest:tt)*]) => {
        named_values!(@ SrnicRmppStats counters COUNTER_NAMES "rmpp_" [] $($rest)*);
    };
    (SrnicVmtpStats, $c:ident, [size, reserved0, $($rest:tt)*]) => {
        named_values!(@ SrnicVmtpStats counters COUNTER_NAMES "vmtp_" [] $($rest)*);
    };
    (SrnicQueryDevice, $c:ident, [size, abi_version, capabilities, $($rest:tt)*]) => {
        named_values!(@ SrnicQueryDevice limits LIMIT_NAMES "" [] $($rest)*);
    };
    ($r:ident, $c:ident, [$($f:ident),*]) => {};
    // Collect every field but `reserved` (fields added after it, as a
    // structure grows by size, count too).
    (@ $r:ident $fn:ident $names:ident $p:literal [$($v:ident)*] reserved, $($rest:tt)*) => {
        named_values!(@ $r $fn $names $p [$($v)*] $($rest)*);
    };
    (@ $r:ident $fn:ident $names:ident $p:literal [$($v:ident)*] reserved) => {
        impl $r {
            #[doc = concat!("The names of [`", stringify!($r), "::", stringify!($fn), "`], in ABI order.")]
            pub const $names: [&'static str; [$(stringify!($v)),*].len()] =
                [$(concat!($p, stringify!($v))),*];

            /// Every value as (name, value), in ABI order.
            pub fn $fn(&self) -> [(&'static str, u64); [$(stringify!($v)),*].len()] {
                [$((concat!($p, stringify!($v)), u64::from(self.$v))),*]
            }
        }
    };
    (@ $r:ident $fn:ident $names:ident $p:literal [$($v:ident)*] $f:ident, $($rest:tt)*) => {
        named_values!(@ $r $fn $names $p [$($v)* $f] $($rest)*);
    };
    (@ $r:ident $fn:ident $names:ident $p:literal [$($v:ident)*] $f:ident) => {
        named_values!(@ $r $fn $names $p [$($v)* $f] reserved);
    };
}
srnic_abi_structs!(named_values);
