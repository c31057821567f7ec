//! `faces/create` of a TCP face, answered once its connection is made, as NFD answers it.
//!
//! # Overview
//! NFD makes a TCP face only once it has connected: `faces/create` is answered then (200), or
//! with 504 when the connection is refused or not made within [`CONNECT_TIMEOUT_MS`] (NFD's
//! 8 s), and no face is left behind. nexthop makes the face at once, its socket connecting
//! without blocking the I/O thread ([`Host::is_connecting`]), and holds the command's answer:
//! - the runtime tells the manager when the connection is made ([`Manager::face_connected`]:
//!   the answer goes out as it was),
//! - or when it failed ([`Manager::face_connect_failed`]: the face is closed, whatever its
//!   persistency, and the answer is 504 naming the error);
//! - [`Manager::expire_connections`] gives up on the connections that took too long, the same
//!   way.
//!
//! A face made at start from the configuration has no answer held: its failure is the runtime's
//! to handle (a permanent face goes down and connects again, `crate::face::reconnect`).

use nexthop_wire::Name;

use super::events::Delivery;
use super::params::ControlResponse;
use super::{reply, Host, Manager};
use crate::face::FaceId;

/// How long a TCP face's connection may take before `faces/create` is answered 504 (NFD's
/// `TcpChannel::connect` timeout).
pub const CONNECT_TIMEOUT_MS: u64 = 8000;

/// A `faces/create` answer held until the face it made has connected.
#[derive(Debug)]
pub(super) struct HeldCreate {
    /// The face being connected.
    face: FaceId,
    /// Who asked, and the PIT token its Interest carried.
    asker: FaceId,
    pit_token: Option<Vec<u8>>,
    /// The command's name (a 504 answers it).
    command: Name,
    /// The answer, sent once connected.
    answer: Vec<u8>,
    /// When the connection is given up.
    deadline_ms: u64,
}

impl HeldCreate {
    fn answered(self, data: Vec<u8>) -> Delivery {
        Delivery { face: self.asker, pit_token: self.pit_token, data }
    }
}

impl Manager {
    /// Holds `answer`, to the command `command` from `asker`, if carrying it out made a face
    /// that is still connecting; `Some(answer)` back otherwise.
    pub(super) fn hold_if_connecting(
        &mut self,
        now_ms: u64,
        asker: FaceId,
        pit_token: Option<&[u8]>,
        command: &Name,
        answer: Vec<u8>,
    ) -> Option<Vec<u8>> {
        let Some(face) = self.connecting_made.take() else { return Some(answer) };
        let pit_token = pit_token.map(<[u8]>::to_vec);
        let deadline_ms = now_ms + CONNECT_TIMEOUT_MS;
        self.held_creates.push(HeldCreate { face, asker, pit_token, command: command.clone(), answer, deadline_ms });
        None
    }

    /// Face `face` has connected: the `faces/create` answer held for it, if any.
    pub fn face_connected(&mut self, face: FaceId) -> Option<Delivery> {
        let i = self.held_creates.iter().position(|h| h.face == face)?;
        let HeldCreate { asker, pit_token, answer, .. } = self.held_creates.swap_remove(i);
        Some(Delivery { face: asker, pit_token, data: answer })
    }

    /// Face `face`'s connection failed (`why`): if a `faces/create` waits for it, the face is
    /// closed and the command answered 504; `None` when none waits (the runtime then handles
    /// the failure as a lost connection).
    pub fn face_connect_failed(&mut self, host: &mut impl Host, face: FaceId, why: &str) -> Option<Delivery> {
        let i = self.held_creates.iter().position(|h| h.face == face)?;
        let held = self.held_creates.swap_remove(i);
        Some(self.fail(host, held, format!("Connection failed: {why}")))
    }

    /// Gives up, at `now_ms`, the connections `faces/create` has waited for too long: each face
    /// closed, each command answered 504.
    pub fn expire_connections(&mut self, host: &mut impl Host, now_ms: u64) -> Vec<Delivery> {
        let (late, waiting) = std::mem::take(&mut self.held_creates).into_iter().partition(|h| h.deadline_ms <= now_ms);
        self.held_creates = waiting;
        late.into_iter().map(|h: HeldCreate| self.fail(host, h, "Connection timed out".into())).collect()
    }

    /// Closes the face `held` waited for and answers its command with 504 `why`.
    fn fail(&mut self, host: &mut impl Host, held: HeldCreate, why: String) -> Delivery {
        tracing::info!(face = held.face, "faces/create: {why}");
        if host.destroy_face(held.face) {
            self.face_gone(host, held.face);
        }
        let data = reply(held.command.clone(), ControlResponse::error(504, why).encode());
        held.answered(data)
    }
}

#[cfg(test)]
mod tests {
    use nexthop_wire::{Component, DataView, Emit, Interest, InterestView};

    use super::*;
    use crate::face::FaceScope;
    use crate::mgmt::params::ControlParameters;
    use crate::mgmt::tests::NullHost;

    /// Asks `m` to make a TCP face at `now`, from face 300 with PIT token [7]: the answer now,
    /// if not held.
    fn create(m: &mut Manager, host: &mut NullHost, now: u64) -> Option<Vec<u8>> {
        let p = ControlParameters { uri: Some("tcp4://192.0.2.1:6363".into()), ..Default::default() };
        let name = Name::from_uri("/localhost/nfd/faces/create").unwrap().with(Component::generic(p.encode()));
        let mut i = Interest::new(name);
        i.sign_digest_sha256();
        let wire = i.to_bytes();
        m.handle(host, now, 300, FaceScope::Local, Some(&[7]), &InterestView::decode(&wire).unwrap()).unwrap()
    }

    fn code(d: &Delivery) -> u64 {
        assert_eq!((d.face, d.pit_token.as_deref()), (300, Some(&[7][..])), "to the asker, with its token");
        ControlResponse::decode(DataView::decode(&d.data).unwrap().content().unwrap()).unwrap().code
    }

    #[test]
    fn the_answer_waits_for_the_connection() {
        let (mut m, mut host) = (Manager::new(0), NullHost::default());
        assert_eq!(create(&mut m, &mut host, 1000), None, "held while connecting");
        assert!(m.face_connected(300).is_none(), "another face's connection");
        let d = m.face_connected(400).expect("the held answer");
        assert_eq!(code(&d), 200);
        assert_eq!(host.tcp_face, Some(true), "the face stays");
        assert!(m.face_connected(400).is_none(), "answered once");
    }

    #[test]
    fn a_failed_connection_closes_the_face_and_answers_504() {
        let (mut m, mut host) = (Manager::new(0), NullHost::default());
        assert_eq!(create(&mut m, &mut host, 1000), None);
        let d = m.face_connect_failed(&mut host, 400, "Connection refused").expect("the held answer");
        assert_eq!(code(&d), 504);
        let text = ControlResponse::decode(DataView::decode(&d.data).unwrap().content().unwrap()).unwrap().text;
        assert_eq!(text, "Connection failed: Connection refused");
        assert_eq!(host.tcp_face, None, "closed");
        assert!(m.face_connect_failed(&mut host, 400, "again").is_none(), "nothing waits any more");
    }

    #[test]
    fn a_connection_not_made_in_8_s_is_given_up() {
        let (mut m, mut host) = (Manager::new(0), NullHost::default());
        assert_eq!(create(&mut m, &mut host, 1000), None);
        assert!(m.expire_connections(&mut host, 1000 + CONNECT_TIMEOUT_MS - 1).is_empty());
        let late = m.expire_connections(&mut host, 1000 + CONNECT_TIMEOUT_MS);
        assert_eq!(late.iter().map(code).collect::<Vec<_>>(), [504]);
        assert_eq!(host.tcp_face, None, "closed");
        // A face the host already made without a command (a configured one) has nothing held.
        host.tcp_face = Some(true);
        assert!(m.face_connect_failed(&mut host, 400, "refused").is_none());
        assert_eq!(host.tcp_face, Some(true), "left to the runtime");
    }
}
