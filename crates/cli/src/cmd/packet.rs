//! `nexthop packet`: decode one NDN packet (Interest, Data or LpPacket) given in hex and print
//! what it holds, or the typed error that makes it invalid.

use anyhow::{bail, Context};
use nexthop_wire::{DataView, InterestView, LpPacketView, PacketView};

/// Arguments of `nexthop packet`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The packet in hex; spaces and colons are ignored (e.g. "05 04 07 02 08 00").
    hex: String,
}

/// Runs `nexthop packet`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let bytes = parse_hex(&args.hex)?;
    let packet = PacketView::decode(&bytes).map_err(|e| anyhow::anyhow!("invalid packet: {e}"))?;
    print(&packet, 0);
    Ok(())
}

fn parse_hex(text: &str) -> anyhow::Result<Vec<u8>> {
    let digits: String = text.chars().filter(|c| !c.is_whitespace() && *c != ':').collect();
    if !digits.len().is_multiple_of(2) {
        bail!("odd number of hex digits");
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).with_context(|| format!("bad hex at digit {i}")))
        .collect()
}

fn print(packet: &PacketView<'_>, indent: usize) {
    let pad = " ".repeat(indent);
    match packet {
        PacketView::Interest(i) => print_interest(i, &pad),
        PacketView::Data(d) => print_data(d, &pad),
        PacketView::Lp(l) => print_lp(l, &pad, indent),
    }
}

fn print_interest(i: &InterestView<'_>, pad: &str) {
    println!("{pad}Interest {}", i.name());
    println!("{pad}  CanBePrefix {}  MustBeFresh {}", i.can_be_prefix(), i.must_be_fresh());
    for hint in i.forwarding_hint() {
        println!("{pad}  ForwardingHint {hint}");
    }
    if let Some(n) = i.nonce() {
        println!("{pad}  Nonce {:02x}{:02x}{:02x}{:02x}", n[0], n[1], n[2], n[3]);
    }
    println!("{pad}  InterestLifetime {} ms{}", i.effective_lifetime_ms(), if i.lifetime_ms().is_none() { " (default)" } else { "" });
    if let Some(h) = i.hop_limit() {
        println!("{pad}  HopLimit {h}");
    }
    if let Some(p) = i.app_parameters() {
        println!("{pad}  ApplicationParameters {} bytes (digest checked)", p.len());
    }
    if let Some(s) = i.signature_info() {
        println!(
            "{pad}  InterestSignatureInfo type {}{}",
            s.signature_type,
            if i.verify_digest_sha256() { " (DigestSha256 verified)" } else { "" }
        );
    }
}

fn print_data(d: &DataView<'_>, pad: &str) {
    println!("{pad}Data {}", d.name());
    println!("{pad}  ContentType {}  FreshnessPeriod {} ms", d.content_type(), d.freshness_period_ms());
    if let Some(f) = d.meta_info().and_then(|m| m.final_block_id) {
        println!("{pad}  FinalBlockId {f}");
    }
    println!("{pad}  Content {} bytes", d.content().map_or(0, <[u8]>::len));
    let verified = if d.verify_digest_sha256() { " (DigestSha256 verified)" } else { "" };
    println!("{pad}  SignatureType {}{verified}", d.signature_info().signature_type);
    println!("{pad}  implicit digest {}", d.implicit_digest().iter().map(|b| format!("{b:02x}")).collect::<String>());
}

fn print_lp(l: &LpPacketView<'_>, pad: &str, indent: usize) {
    println!("{pad}LpPacket");
    let fields = [
        ("Sequence", l.sequence),
        ("FragIndex", l.frag_index),
        ("FragCount", l.frag_count),
        ("NextHopFaceId", l.next_hop_face_id),
        ("IncomingFaceId", l.incoming_face_id),
        ("CachePolicyType", l.cache_policy),
        ("CongestionMark", l.congestion_mark),
        ("TxSequence", l.tx_sequence),
    ];
    for (name, value) in fields {
        if let Some(v) = value {
            println!("{pad}  {name} {v}");
        }
    }
    if let Some(t) = l.pit_token {
        println!("{pad}  PitToken {}", t.iter().map(|b| format!("{b:02x}")).collect::<String>());
    }
    if let Some(reason) = l.nack() {
        println!("{pad}  Nack {reason:?}");
    }
    match l.fragment {
        Some(f) if l.is_whole() => match PacketView::decode(f) {
            Ok(inner) => print(&inner, indent + 2),
            Err(e) => println!("{pad}  Fragment {} bytes: invalid packet: {e}", f.len()),
        },
        Some(f) => println!("{pad}  Fragment {} bytes (one piece of a fragmented packet)", f.len()),
        None => println!("{pad}  (no fragment)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_parsing() {
        assert_eq!(parse_hex("05 02:07 00").unwrap(), [5, 2, 7, 0]);
        assert!(parse_hex("050").is_err());
        assert!(parse_hex("zz").is_err());
    }
}
