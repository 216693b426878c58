//! MsgWorldSnapshot (`wsnap`): snapshots from the bot swarm, and the bombs of its layout
//! (u4 lengths, a u2 origin count, zstd bodies, and the smallest records and despawn entries).

use super::NamedFile;
use statepack::formats::world_snapshot::assembler::{Peer, PeerView};
use statepack::formats::world_snapshot::{
    self as ws, BlobKind, EncodedEntity, SnapshotWriter, MAX_BODY_BYTES, MAX_ZSTD_RATIO,
};
use statepack::sim::wsnap_swarm as sim;

/// No fixture fits a world snapshot (the motion fixtures are human-scale joint motion), so
/// these are what the writers make from the swarm's motion model: the first three
/// snapshots one client of an 8-bot swarm receives (full records, then deltas), raw and
/// compressed.
pub fn fixture_files() -> Vec<NamedFile> {
    let states: Vec<_> = (0..8).map(|i| sim::bot_state(i, 0.5, true, 1)).collect();
    let enc: Vec<EncodedEntity> = states.iter().map(EncodedEntity::new).collect();
    let pos: Vec<_> = states.iter().map(|s| s.position_m).collect();
    let mut peer = Peer::new(PeerView {
        own_entity: Some(0),
        position_m: pos[0],
        interest_radius_m: 1.0e6,
        budget_bytes: usize::MAX,
    });
    let mut w = SnapshotWriter::new();
    let mut out = Vec::new();
    for tick in 0..3 {
        let compress = tick == 2;
        let (b, _) = peer
            .assemble(tick, &enc, &pos, &mut w, compress)
            .expect("assemble");
        out.push((format!("swarm of 8, client 0, tick {tick}"), b));
    }
    out
}

fn header(flags: u8, origins: u16, records: u32, bitstream: u32, tlv: u32, body: u32) -> Vec<u8> {
    let mut b = vec![ws::MSG_TYPE, flags];
    b.extend_from_slice(&origins.to_le_bytes());
    b.extend_from_slice(&7u32.to_le_bytes());
    b.extend_from_slice(&records.to_le_bytes());
    b.extend_from_slice(&bitstream.to_le_bytes());
    b.extend_from_slice(&tlv.to_le_bytes());
    b.extend_from_slice(&body.to_le_bytes());
    b
}

/// The smallest stitched record: origin index 0 and a delta blob of a one-byte entity index
/// (25 bytes).
fn smallest_record() -> Vec<u8> {
    let s = ws::sample_entity(1, false);
    let e = EncodedEntity::new(&s);
    let mut r = vec![0u8];
    r.extend_from_slice(e.blob(BlobKind::DELTA));
    r
}

/// Counts and lengths at their maximum over tiny buffers, zstd frames that claim more than
/// the limits, and the largest inputs of the smallest elements (records, despawn entries),
/// raw and compressed at the largest accepted ratio.
pub fn bombs() -> Vec<NamedFile> {
    let mut out = Vec::new();
    let mut b = header(0, u16::MAX, 0, 0, 0, u32::MAX);
    b.extend_from_slice(&[0; 16]);
    out.push(("65 535 origins in 40 bytes".to_owned(), b));
    let mut b = header(0, 0, u32::MAX, u32::MAX, 0, u32::MAX);
    b.extend_from_slice(&smallest_record());
    out.push(("bitstream length 4 GiB over one record".to_owned(), b));
    let mut b = header(0, 0, 0, 0, u32::MAX, u32::MAX);
    b.extend_from_slice(&[1, 0xff, 0xff, 0x05]);
    out.push((
        "tlv length 4 GiB, despawn length 65 535, over 4 bytes".to_owned(),
        b,
    ));
    // A zstd frame of 1 MiB of zeros claims the largest body: refused by the ratio limit.
    let zeros = zstd::bulk::compress(&vec![0u8; MAX_BODY_BYTES], 19).expect("zstd");
    let mut b = header(1, 0, 0, 0, 0, MAX_BODY_BYTES as u32);
    b.extend_from_slice(&zeros);
    out.push(("zstd frame of 1 MiB of zeros".to_owned(), b));
    let mut b = header(1, 0, 0, 0, 0, u32::MAX);
    b.extend_from_slice(&zeros);
    out.push(("zstd body claiming 4 GiB".to_owned(), b));
    // The most records a body can hold: 1 MiB of smallest records, raw.
    let rec = smallest_record();
    let n = MAX_BODY_BYTES / rec.len();
    let stream: Vec<u8> = rec.iter().copied().cycle().take(n * rec.len()).collect();
    let mut b = header(
        0,
        1,
        n as u32,
        stream.len() as u32,
        0,
        (24 + stream.len()) as u32,
    );
    b.extend_from_slice(&[0; 24]);
    b.extend_from_slice(&stream);
    out.push((format!("{n} smallest records, raw"), b));
    // The same records compressed: the most records whose frame stays within the largest
    // accepted ratio.
    let (mut lo, mut hi) = (1usize, n);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let mut body = vec![0u8; 24];
        body.extend_from_slice(&stream[..mid * rec.len()]);
        let frame = zstd::bulk::compress(&body, 19).expect("zstd");
        if body.len() <= frame.len() * MAX_ZSTD_RATIO {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut body = vec![0u8; 24];
    body.extend_from_slice(&stream[..lo * rec.len()]);
    let frame = zstd::bulk::compress(&body, 19).expect("zstd");
    let mut b = header(
        1,
        1,
        lo as u32,
        (body.len() - 24) as u32,
        0,
        body.len() as u32,
    );
    b.extend_from_slice(&frame);
    out.push((
        format!("{lo} smallest records, zstd at the largest ratio"),
        b,
    ));
    // Many records of low entropy (entity index 1..=k at random), k chosen so the frame is
    // as small as the ratio limit allows, and one record more than a power of two, so the
    // record list's growth wastes the most: the most memory per input byte a file can ask for.
    let mut best: Option<(usize, Vec<u8>, Vec<u8>)> = None;
    let mut rng = super::Rng::new(0x2545);
    for k in 2..=24usize {
        let mut body = vec![0u8; 24];
        for _ in 0..8193 {
            let mut r = rec.clone();
            r[1] = 1 + rng.below(k) as u8;
            body.extend_from_slice(&r);
        }
        let frame = zstd::bulk::compress(&body, 3).expect("zstd");
        if body.len() <= frame.len() * MAX_ZSTD_RATIO
            && best
                .as_ref()
                .is_none_or(|(_, f, b)| body.len() * f.len() > b.len() * frame.len())
        {
            best = Some((k, frame, body));
        }
    }
    if let Some((k, frame, body)) = best {
        let mut b = header(1, 1, 8193, (body.len() - 24) as u32, 0, body.len() as u32);
        b.extend_from_slice(&frame);
        out.push((
            format!("8193 records of {k} entity indices, zstd near the ratio limit"),
            b,
        ));
    }
    // One-byte despawn entries: 16 TLVs of 65 535 each.
    let mut tlv = Vec::new();
    for _ in 0..16 {
        tlv.push(1);
        tlv.extend_from_slice(&u16::MAX.to_le_bytes());
        tlv.extend(std::iter::repeat_n(5u8, usize::from(u16::MAX)));
    }
    let mut b = header(0, 0, 0, 0, tlv.len() as u32, tlv.len() as u32);
    b.extend_from_slice(&tlv);
    out.push(("16 despawn lists of 65 535 one-byte entries".to_owned(), b));
    out
}
