//! A hand-written bit writer and reader of the same records as the generated code, on the
//! runtime's [`BitWriter`] / [`BitReader`] (u64 accumulator, at most 32 bits per step): the
//! baseline of `benches/world_snapshot.rs` and an independent check of the generated reader
//! and writer (`tests/world_snapshot.rs` includes this file as a `#[path]` module and compares
//! them byte for byte). It is not part of the library: the generated codec is the one API. It
//! trusts its input records to be in range
//! (the quantizers guarantee it); the generated writer is the one that refuses bad values.

use statepack::generated::world_snapshot::{EntityBlob, EntityRecord};
use statepack_runtime::bits::{to_offset_binary, BitError, BitReader, BitWriter};

#[inline(always)]
fn signed(w: &mut BitWriter, v: i64, width: u32) {
    // In range by construction; an out-of-range value is written as code 0.
    w.put(to_offset_binary(v, width).unwrap_or(0), width);
}

/// Appends the blob `r` (everything after the origin index) to `w`, byte-aligned at the
/// end.
#[inline]
pub fn write_blob(w: &mut BitWriter, r: &EntityBlob) {
    w.put_varint_aligned(r.entity_index);
    w.put_bool(r.full);
    w.put_bool(r.gen_present);
    w.put_bool(r.omega_present);
    if let Some(g) = r.generation {
        w.put(u64::from(g), 16);
    }
    if let Some(t) = r.type_index {
        w.put_varint(t);
    }
    if let Some(f) = r.faction_index {
        w.put(u64::from(f), 16);
    }
    for p in [r.pos_x, r.pos_y, r.pos_z] {
        signed(w, i64::from(p), 22);
    }
    w.put(u64::from(r.rot_dropped), 2);
    for c in [r.rot_a, r.rot_b, r.rot_c] {
        w.put(u64::from(c), 10);
    }
    for v in [r.vel_x, r.vel_y, r.vel_z] {
        signed(w, i64::from(v), 18);
    }
    if r.omega_present {
        for o in [r.omega_x, r.omega_y, r.omega_z] {
            signed(w, i64::from(o.unwrap_or(0)), 12);
        }
        w.put(u64::from(r.selected_station.unwrap_or(0)), 8);
        w.put(u64::from(r.station_rounds.unwrap_or(0)), 16);
        w.put(u64::from(r.weapon_flags.unwrap_or(0)), 8);
        w.put(u64::from(r.payload_mass_kg.unwrap_or(0)), 16);
        w.put(u64::from(r.payload_cd0.unwrap_or(0)), 16);
    }
    w.put(u64::from(r.damage_level), 3);
    w.put(u64::from(r.engine_fail_flags), 5);
    w.put(u64::from(r.throttle_pct), 7);
    w.put(u64::from(r.fuel_pct), 7);
    w.put_bool(r.ab_engaged);
    w.put_bool(r.player_owned);
    w.align();
}

/// Appends a whole stitched record (origin index, then the blob).
#[inline]
pub fn write_record(w: &mut BitWriter, r: &EntityRecord) {
    w.put_varint_aligned(r.origin_index);
    write_blob(w, &r.blob);
}

/// Reads one stitched record. Errors: [`BitError`] (end of input, bad varint, non-zero
/// padding), failing closed.
#[inline]
pub fn read_record(rd: &mut BitReader<'_>) -> Result<EntityRecord, BitError> {
    let origin_index = rd.read_varint_aligned()?;
    let entity_index = rd.read_varint_aligned()?;
    let full = rd.read_bool()?;
    let gen_present = rd.read_bool()?;
    let omega_present = rd.read_bool()?;
    let generation = if gen_present {
        Some(rd.read_bits(16)? as u16)
    } else {
        None
    };
    let type_index = if full { Some(rd.read_varint()?) } else { None };
    let faction_index = if full {
        Some(rd.read_bits(16)? as u16)
    } else {
        None
    };
    let pos_x = rd.read_signed(22)? as i32;
    let pos_y = rd.read_signed(22)? as i32;
    let pos_z = rd.read_signed(22)? as i32;
    let rot_dropped = rd.read_bits(2)? as u8;
    let rot_a = rd.read_bits(10)? as u16;
    let rot_b = rd.read_bits(10)? as u16;
    let rot_c = rd.read_bits(10)? as u16;
    let vel_x = rd.read_signed(18)? as i32;
    let vel_y = rd.read_signed(18)? as i32;
    let vel_z = rd.read_signed(18)? as i32;
    let (mut ox, mut oy, mut oz, mut ss, mut sr, mut wf, mut pm, mut pc) =
        (None, None, None, None, None, None, None, None);
    if omega_present {
        ox = Some(rd.read_signed(12)? as i16);
        oy = Some(rd.read_signed(12)? as i16);
        oz = Some(rd.read_signed(12)? as i16);
        ss = Some(rd.read_bits(8)? as u8);
        sr = Some(rd.read_bits(16)? as u16);
        wf = Some(rd.read_bits(8)? as u8);
        pm = Some(rd.read_bits(16)? as u16);
        pc = Some(rd.read_bits(16)? as u16);
    }
    let damage_level = rd.read_bits(3)? as u8;
    let engine_fail_flags = rd.read_bits(5)? as u8;
    let throttle_pct = rd.read_bits(7)? as u8;
    let fuel_pct = rd.read_bits(7)? as u8;
    let ab_engaged = rd.read_bool()?;
    let player_owned = rd.read_bool()?;
    rd.align()?;
    let blob = EntityBlob {
        entity_index,
        full,
        gen_present,
        omega_present,
        generation,
        type_index,
        faction_index,
        pos_x,
        pos_y,
        pos_z,
        rot_dropped,
        rot_a,
        rot_b,
        rot_c,
        vel_x,
        vel_y,
        vel_z,
        omega_x: ox,
        omega_y: oy,
        omega_z: oz,
        selected_station: ss,
        station_rounds: sr,
        weapon_flags: wf,
        payload_mass_kg: pm,
        payload_cd0: pc,
        damage_level,
        engine_fail_flags,
        throttle_pct,
        fuel_pct,
        ab_engaged,
        player_owned,
        align: Vec::new(),
    };
    Ok(EntityRecord { origin_index, blob })
}

/// Reads every record of a record stream. Errors: as [`read_record`].
pub fn read_stream(stream: &[u8]) -> Result<Vec<EntityRecord>, BitError> {
    let mut rd = BitReader::new(stream);
    let mut out = Vec::with_capacity(stream.len() / 24);
    while rd.bits_left() > 0 {
        out.push(read_record(&mut rd)?);
    }
    Ok(out)
}
