// SPDX-License-Identifier: GPL-2.0
//! The life of a queue pair's connection, as a state machine with no I/O.
//!
//! ```text
//!   Idle --start_connect--> Connecting --establish--> Connected --begin_close--> Closing
//!                               |                        |                         |
//!                         connect_failed          fail / disconnected        disconnected
//!                               v                        v                         v
//!                             Error <-------------------------------------------- +
//!   Idle, Connecting --abandon--> Error (a drain of a QP with no connection to close)
//!   any state --destroy--> Destroyed (final)
//! ```
//!
//! Every change is one method that checks the state it leaves and refuses
//! ([`Refused`]) when that state does not allow it. The owner of a QP keeps
//! one [`Lifecycle`] under the lock that guards its connection, so a decision
//! and the change it depends on are one step: a QP destroyed while its
//! connection was being set up refuses [`Lifecycle::establish`], and its
//! connection manager closes the socket instead of handing it over.

/// Where a connection is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Created; never connected.
    Idle,
    /// CONNECT or ACCEPT was called: the connection manager runs MPA start-up.
    Connecting,
    /// MPA start-up succeeded: data moves.
    Connected,
    /// A local disconnect is closing the connection.
    Closing,
    /// The connection failed or ended: work requests are flushed, nothing new
    /// is sent.
    Error,
    /// The QP was destroyed (or its owner went away): nothing may report on it.
    Destroyed,
}

impl State {
    /// Every state, at its [`State::index`].
    pub const ALL: [State; 6] = [
        State::Idle,
        State::Connecting,
        State::Connected,
        State::Closing,
        State::Error,
        State::Destroyed,
    ];

    /// The state as a small number (for an atomic copy of it).
    #[must_use]
    pub const fn index(self) -> u8 {
        self as u8
    }

    /// The state whose [`State::index`] is `i`.
    #[must_use]
    pub fn from_index(i: u8) -> Option<State> {
        Self::ALL.get(usize::from(i)).copied()
    }

    /// Whether work requests may be posted: in every state but Destroyed, as
    /// in ibverbs. Before the connection they wait for it; after a failure
    /// (Error) they complete at once with a flush status, and while closing
    /// the disconnect flushes them.
    #[must_use]
    pub const fn accepts_posts(self) -> bool {
        !matches!(self, State::Destroyed)
    }

    /// Whether data moves.
    #[must_use]
    pub const fn is_connected(self) -> bool {
        matches!(self, State::Connected)
    }

    /// Whether the connection is over (failed, ended or destroyed): the
    /// transmit path closes the socket.
    #[must_use]
    pub const fn is_over(self) -> bool {
        matches!(self, State::Error | State::Destroyed)
    }

    /// Whether the QP was destroyed.
    #[must_use]
    pub const fn is_destroyed(self) -> bool {
        matches!(self, State::Destroyed)
    }
}

/// A change the current state does not allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The state that refused.
    pub from: State,
}

/// What [`Lifecycle::disconnected`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Disconnect {
    /// The QP was in ERROR already (a failure came first).
    pub was_error: bool,
    /// This is the first disconnection of a QP that still exists: the one
    /// that may be reported.
    pub first: bool,
}

/// The state of one connection, changed only through its transitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lifecycle {
    state: State,
    disconnect_seen: bool,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Self::new()
    }
}

impl Lifecycle {
    /// A new connection, Idle.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            state: State::Idle,
            disconnect_seen: false,
        }
    }

    /// The current state.
    #[must_use]
    pub const fn state(&self) -> State {
        self.state
    }

    fn to(&mut self, allowed: bool, next: State) -> Result<(), Refused> {
        if !allowed {
            return Err(Refused { from: self.state });
        }
        self.state = next;
        Ok(())
    }

    /// CONNECT or ACCEPT: Idle to Connecting.
    pub fn start_connect(&mut self) -> Result<(), Refused> {
        self.to(self.state == State::Idle, State::Connecting)
    }

    /// MPA start-up succeeded: Connecting to Connected. Refused for a QP that
    /// was destroyed or failed meanwhile.
    pub fn establish(&mut self) -> Result<(), Refused> {
        self.to(self.state == State::Connecting, State::Connected)
    }

    /// MPA start-up failed: Connecting to Error. Refused when the QP was
    /// destroyed meanwhile (the only other way out of Connecting): nothing
    /// may be reported on it.
    pub fn connect_failed(&mut self) -> Result<(), Refused> {
        self.to(self.state == State::Connecting, State::Error)
    }

    /// A protocol failure (a TERMINATE sent or received) on a connection that
    /// carries data: Connected or Closing to Error. Refused once in Error or
    /// destroyed: the first failure is the one reported.
    pub fn fail(&mut self) -> Result<(), Refused> {
        let live = matches!(self.state, State::Connected | State::Closing);
        self.to(live, State::Error)
    }

    /// A local disconnect begins: Connected to Closing. Closing and Error stay
    /// as they are (a disconnect after a failure still closes the socket);
    /// refused before the connection existed and after destruction.
    pub fn begin_close(&mut self) -> Result<(), Refused> {
        match self.state {
            State::Connected => self.to(true, State::Closing),
            State::Closing | State::Error => Ok(()),
            _ => Err(Refused { from: self.state }),
        }
    }

    /// A drain of a QP that has no connection to close: Idle or Connecting to
    /// Error (a connection being set up is given up: its `establish` is
    /// refused, and its connection manager closes the socket); Error stays.
    /// Refused for Connected and Closing (their connection closes:
    /// `begin_close`, then `disconnected`) and for Destroyed.
    pub fn abandon(&mut self) -> Result<(), Refused> {
        match self.state {
            State::Idle | State::Connecting | State::Error => self.to(true, State::Error),
            _ => Err(Refused { from: self.state }),
        }
    }

    /// The connection ended (peer close, local disconnect, a failed send):
    /// to Error. A destroyed QP stays destroyed and nothing is to be reported.
    pub fn disconnected(&mut self) -> Disconnect {
        if self.state == State::Destroyed {
            return Disconnect {
                was_error: true,
                first: false,
            };
        }
        let was_error = self.state == State::Error;
        let first = !self.disconnect_seen;
        self.disconnect_seen = true;
        self.state = State::Error;
        Disconnect { was_error, first }
    }

    /// Destruction: from any state to Destroyed, for good.
    pub fn destroy(&mut self) {
        self.state = State::Destroyed;
    }

    /// [`State::accepts_posts`] of the current state.
    #[must_use]
    pub const fn accepts_posts(&self) -> bool {
        self.state.accepts_posts()
    }

    /// [`State::is_connected`] of the current state.
    #[must_use]
    pub const fn is_connected(&self) -> bool {
        self.state.is_connected()
    }

    /// [`State::is_over`] of the current state.
    #[must_use]
    pub const fn is_over(&self) -> bool {
        self.state.is_over()
    }

    /// [`State::is_destroyed`] of the current state.
    #[must_use]
    pub const fn is_destroyed(&self) -> bool {
        self.state.is_destroyed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [State; 6] = State::ALL;

    /// Every state comes back from its index, and nothing else has one.
    #[test]
    fn index_round_trip() {
        for (i, s) in ALL.iter().enumerate() {
            assert_eq!(s.index() as usize, i);
            assert_eq!(State::from_index(s.index()), Some(*s));
        }
        assert_eq!(State::from_index(ALL.len() as u8), None);
        assert_eq!(State::from_index(u8::MAX), None);
    }

    fn at(state: State) -> Lifecycle {
        Lifecycle {
            state,
            disconnect_seen: false,
        }
    }

    /// Every transition from every state: allowed ones land where the diagram
    /// says, refused ones change nothing and name the state that refused.
    #[test]
    fn transition_table() {
        type Step = fn(&mut Lifecycle) -> Result<(), Refused>;
        type Row<'a> = (&'a str, Step, &'a [(State, State)]);
        let steps: [Row<'_>; 6] = [
            (
                "start_connect",
                Lifecycle::start_connect,
                &[(State::Idle, State::Connecting)],
            ),
            (
                "establish",
                Lifecycle::establish,
                &[(State::Connecting, State::Connected)],
            ),
            (
                "connect_failed",
                Lifecycle::connect_failed,
                &[(State::Connecting, State::Error)],
            ),
            (
                "fail",
                Lifecycle::fail,
                &[
                    (State::Connected, State::Error),
                    (State::Closing, State::Error),
                ],
            ),
            (
                "begin_close",
                Lifecycle::begin_close,
                &[
                    (State::Connected, State::Closing),
                    (State::Closing, State::Closing),
                    (State::Error, State::Error),
                ],
            ),
            (
                "abandon",
                Lifecycle::abandon,
                &[
                    (State::Idle, State::Error),
                    (State::Connecting, State::Error),
                    (State::Error, State::Error),
                ],
            ),
        ];
        for (name, step, allowed) in steps {
            for from in ALL {
                let mut l = at(from);
                let got = step(&mut l);
                match allowed.iter().find(|(f, _)| *f == from) {
                    Some(&(_, to)) => {
                        assert_eq!(got, Ok(()), "{name} from {from:?}");
                        assert_eq!(l.state(), to, "{name} from {from:?}");
                    }
                    None => {
                        assert_eq!(got, Err(Refused { from }), "{name} from {from:?}");
                        assert_eq!(l.state(), from, "{name} from {from:?} changed the state");
                    }
                }
            }
        }
    }

    #[test]
    fn a_qp_destroyed_while_connecting_refuses_the_connection() {
        let mut l = Lifecycle::new();
        assert_eq!(l.start_connect(), Ok(()));
        l.destroy();
        assert_eq!(
            l.establish(),
            Err(Refused {
                from: State::Destroyed
            })
        );
        assert_eq!(
            l.connect_failed(),
            Err(Refused {
                from: State::Destroyed
            })
        );
        assert!(l.is_destroyed() && l.is_over());
    }

    #[test]
    fn a_second_connect_is_refused() {
        let mut l = Lifecycle::new();
        assert_eq!(l.start_connect(), Ok(()));
        assert_eq!(
            l.start_connect(),
            Err(Refused {
                from: State::Connecting
            })
        );
        assert_eq!(l.establish(), Ok(()));
        assert_eq!(
            l.establish(),
            Err(Refused {
                from: State::Connected
            })
        );
    }

    #[test]
    fn disconnection_is_reported_once_and_never_after_destruction() {
        let mut l = at(State::Connected);
        assert_eq!(
            l.disconnected(),
            Disconnect {
                was_error: false,
                first: true
            }
        );
        assert_eq!(l.state(), State::Error);
        assert_eq!(
            l.disconnected(),
            Disconnect {
                was_error: true,
                first: false
            }
        );

        let mut l = at(State::Connected);
        assert_eq!(l.fail(), Ok(()));
        assert_eq!(
            l.disconnected(),
            Disconnect {
                was_error: true,
                first: true
            }
        );

        let mut l = at(State::Connected);
        l.destroy();
        assert_eq!(
            l.disconnected(),
            Disconnect {
                was_error: true,
                first: false
            }
        );
        assert_eq!(l.state(), State::Destroyed);
    }

    #[test]
    fn posting_follows_the_state() {
        for s in ALL {
            let l = at(s);
            assert_eq!(l.accepts_posts(), s != State::Destroyed, "{s:?}");
            assert_eq!(l.is_connected(), s == State::Connected, "{s:?}");
        }
    }
}
