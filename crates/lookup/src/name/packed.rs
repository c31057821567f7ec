//! Packed names: how the entry arena stores a name, a byte per component shorter than its TLV.
//!
//! Overview. A name's TLV value spends a type and a length on every component, and nearly every
//! component is generic (type 8) and shorter than 252 bytes: "8, len, bytes". Packed, such a
//! component is "len + 1, bytes"; any other component is an escape byte followed by its whole
//! TLV: [`LOW`] for types below 8, [`HIGH`] for types above 8 and for generic components of 252
//! bytes or more. A 7-component name of 8-byte components is 63 bytes instead of 70.
//!
//! Three properties the FIB relies on:
//! - Packing is per component, so the packed prefix of a name is a byte prefix of the packed
//!   name, and a name's packed extensions are one contiguous run in byte order.
//! - Packed names compare as bytes exactly as their TLV values do (the escapes sort where the
//!   types they stand for sort; a short generic component's length byte is its TLV length byte
//!   plus one), so the route index's order is name order.
//! - A packed name can be checked against a TLV prefix without unpacking it
//!   ([`starts_with_tlv`]), which is the byte comparison of a lookup's verification.

use super::component::component_end;

/// Escape for a component whose type sorts below generic (types 0–7).
pub const LOW: u8 = 0;
/// Escape for a component whose type sorts above generic, or a generic one of 252+ bytes.
pub const HIGH: u8 = 0xff;
/// TLV type of a generic name component.
const GENERIC: u8 = 8;
/// Longest generic component packed without an escape.
const SHORT: u8 = 251;

/// The packed form of one component given as its whole TLV `c`: a head byte, then the body.
#[inline(always)]
pub fn packed_component(c: &[u8]) -> (u8, &[u8]) {
    if c[0] == GENERIC && c[1] <= SHORT {
        (c[1] + 1, &c[2..])
    } else {
        (if c[0] < GENERIC { LOW } else { HIGH }, c)
    }
}

/// Appends the packed form of the name with TLV value `value` to `out` (bytes that do not parse
/// as a component end it, as they end the prefix hash).
pub fn pack(value: &[u8], out: &mut Vec<u8>) {
    let mut at = 0;
    while at < value.len() {
        let Some(end) = component_end(value, at) else { break };
        let (head, body) = packed_component(&value[at..end]);
        out.push(head);
        out.extend_from_slice(body);
        at = end;
    }
}

/// The packed form of `value`.
pub fn packed(value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len());
    pack(value, &mut out);
    out
}

/// Appends the TLV value of the packed name `packed` to `out`.
pub fn unpack(packed: &[u8], out: &mut Vec<u8>) {
    let mut at = 0;
    while at < packed.len() {
        match packed[at] {
            LOW | HIGH => {
                let end = component_end(packed, at + 1).unwrap_or(packed.len());
                out.extend_from_slice(&packed[at + 1..end]);
                at = end;
            }
            len => {
                let end = (at + usize::from(len)).min(packed.len());
                out.extend_from_slice(&[GENERIC, len - 1]);
                out.extend_from_slice(&packed[at + 1..end]);
                at = end;
            }
        }
    }
}

/// Bytes of the first `components` components of the packed name `packed` (all of it if it
/// has fewer).
pub fn prefix_len(packed: &[u8], components: usize) -> usize {
    let mut at = 0;
    for _ in 0..components {
        let end = match packed.get(at) {
            None => break,
            Some(&(LOW | HIGH)) => component_end(packed, at + 1),
            Some(&head) => Some(at + usize::from(head)),
        };
        match end {
            Some(end) if end <= packed.len() => at = end,
            _ => return packed.len(),
        }
    }
    at
}

/// The TLV value of the packed name `packed`.
pub fn unpacked(packed: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(packed.len() + 16);
    unpack(packed, &mut out);
    out
}

/// Whether the packed name `packed` starts with the name whose TLV value is `prefix` (whole
/// components, as a lookup's prefixes are), component by component. A lookup compares its own
/// packed prefixes instead (`PrefixHashes::packed_prefix`), one `memcmp` each; this is for
/// names too long for that.
pub fn starts_with_tlv(packed: &[u8], prefix: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    while t < prefix.len() {
        let Some(end) = component_end(prefix, t) else { return false };
        let (head, body) = packed_component(&prefix[t..end]);
        if packed.get(p) != Some(&head) || packed.get(p + 1..p + 1 + body.len()) != Some(body) {
            return false;
        }
        p += 1 + body.len();
        t = end;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use nexthop_wire::{ComponentRef, Name};
    use proptest::prelude::*;

    /// Components of every kind: generic short and long, and other types below and above 8.
    fn component() -> impl Strategy<Value = (u32, Vec<u8>)> {
        prop_oneof![
            4 => prop::collection::vec(any::<u8>(), 0..12).prop_map(|v| (8, v)),
            1 => prop::collection::vec(any::<u8>(), 249..300).prop_map(|v| (8, v)),
            1 => (prop::sample::select(vec![3u32, 7, 9, 32, 50, 252, 253, 300, 65_535]), prop::collection::vec(any::<u8>(), 0..40)),
        ]
    }

    fn name() -> impl Strategy<Value = Name> {
        prop::collection::vec(component(), 0..6).prop_map(|comps| {
            let mut n = Name::new();
            for (t, v) in comps {
                n.push(ComponentRef::new(t, &v).expect("types are 3..=65535, none a digest"));
            }
            n
        })
    }

    #[test]
    fn a_generic_component_costs_one_byte_less() {
        let n = Name::from_uri("/net/named-data/www").unwrap();
        let p = packed(n.value());
        assert_eq!(p.len(), n.value().len() - 3);
        assert_eq!(p[0], 4, "length 3, plus one");
        assert_eq!(unpacked(&p), n.value());
    }

    proptest! {
        #[test]
        fn packing_round_trips_and_keeps_order_and_prefixes(a in name(), b in name()) {
            let (pa, pb) = (packed(a.value()), packed(b.value()));
            prop_assert_eq!(unpacked(&pa), a.value());
            prop_assert_eq!(pa.cmp(&pb), a.value().cmp(b.value()), "order");
            prop_assert_eq!(pb.starts_with(&pa), b.value().starts_with(a.value()), "prefix as bytes");
            prop_assert_eq!(starts_with_tlv(&pb, a.value()), b.value().starts_with(a.value()), "prefix against TLV");
            let mut onwards = pa.clone();
            onwards.extend_from_slice(&pb);
            for c in 0..=a.len() {
                let mut prefix = Name::new();
                a.components().take(c).for_each(|comp| prefix.push(comp));
                prop_assert_eq!(prefix_len(&onwards, c), packed(prefix.value()).len(), "prefix length");
            }
        }
    }
}
