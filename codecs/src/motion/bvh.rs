//! A small, strict reader for Biovision hierarchy (BVH) motion files.
//!
//! # What is read
//!
//! ```text
//! HIERARCHY
//! ROOT <name>
//! {
//!     OFFSET <x> <y> <z>
//!     CHANNELS <n> <channel>...        n = 1..=6, each of Xposition Yposition Zposition
//!     JOINT <name> { ... }              Xrotation Yrotation Zrotation at most once, any order
//!     End Site { OFFSET <x> <y> <z> }
//! }
//! MOTION
//! Frames: <count>
//! Frame Time: <seconds>
//! <one line per frame: one number per channel, joints in file order>
//! ```
//!
//! Keywords and channel names are matched without regard to ASCII case; tokens are separated by
//! any whitespace, line ends may be `\n` or `\r\n`, blank lines are ignored. A joint name is the
//! rest of its line (a trailing `{` on the same line opens the joint). Several `ROOT`s are
//! allowed; each starts a separate tree.
//!
//! # How it maps onto [`Clip`]
//!
//! - Every `ROOT` and `JOINT` becomes one [`Bone`], in file order (parents before children),
//!   with `rest_translation` = its `OFFSET`.
//! - **End Sites are not bones.** They carry no channels and so no motion; they only mark where
//!   a chain's last segment ends. Their offsets are checked and then dropped, so the skeleton
//!   has exactly the file's joints (the CMU walk fixture: 31 joints, 7 End Sites).
//! - Per frame, a joint's local translation is its `OFFSET`, except that each axis with a
//!   position channel takes that channel's value instead (usually only the root has them).
//! - Rotation channels are degrees and compose in the order listed, as intrinsic rotations: for
//!   `Zrotation Yrotation Xrotation` the local rotation is `Rz * Ry * Rx`.
//! - Scale is always 1. Distances keep the file's unit (the fixtures used here are in metres).
//! - The clip's name is empty; [`super::load_motion_file`] names it after the file.
//!
//! # Bad input
//!
//! Every deviation is a [`MotionError::Bvh`] with the 1-based line number, what was expected
//! and what was found; nothing panics. Numbers must be finite. A frame line must hold exactly
//! one value per channel. The `Frames:` count is only compared with the lines that follow, never
//! used to reserve memory, so memory stays within a fixed multiple of the text's size (each
//! joint has at least one channel, so each bone of each frame is backed by at least one number
//! in the text).

use glam::{DQuat, DVec3};

use super::{Bone, Clip, LocalTransform, MotionError, Skeleton};

/// A coordinate axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Axis {
    X,
    Y,
    Z,
}

/// One BVH channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Channel {
    Position(Axis),
    Rotation(Axis),
}

impl Channel {
    fn parse(token: &str) -> Option<Self> {
        const NAMES: [(&str, Channel); 6] = [
            ("Xposition", Channel::Position(Axis::X)),
            ("Yposition", Channel::Position(Axis::Y)),
            ("Zposition", Channel::Position(Axis::Z)),
            ("Xrotation", Channel::Rotation(Axis::X)),
            ("Yrotation", Channel::Rotation(Axis::Y)),
            ("Zrotation", Channel::Rotation(Axis::Z)),
        ];
        NAMES
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(token))
            .map(|&(_, channel)| channel)
    }
}

/// Most channels a joint can have: three positions and three rotations.
const MAX_CHANNELS: usize = 6;

/// Whitespace-separated tokens with their 1-based line numbers.
struct Cursor<'a> {
    lines: std::iter::Enumerate<std::str::Lines<'a>>,
    line: usize,
    tokens: std::str::SplitWhitespace<'a>,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            lines: text.lines().enumerate(),
            line: 0,
            tokens: "".split_whitespace(),
        }
    }

    /// The next token and its line, crossing line ends.
    fn next_token(&mut self) -> Option<(usize, &'a str)> {
        loop {
            if let Some(token) = self.tokens.next() {
                return Some((self.line, token));
            }
            let (index, text) = self.lines.next()?;
            self.line = index + 1;
            self.tokens = text.split_whitespace();
        }
    }

    /// Takes the tokens left on the current line.
    fn rest_of_line(&mut self) -> std::str::SplitWhitespace<'a> {
        std::mem::replace(&mut self.tokens, "".split_whitespace())
    }

    /// Line number to report for a premature end of the text.
    fn end_line(&self) -> usize {
        self.line + 1
    }
}

const END_OF_FILE: &str = "end of file";

/// Quotes a found token for an error message, cut to a readable length.
fn quoted(token: &str) -> String {
    const LIMIT: usize = 40;
    match token.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("`{}…`", &token[..cut]),
        None => format!("`{token}`"),
    }
}

fn error(line: usize, expected: impl Into<String>, found: impl Into<String>) -> MotionError {
    MotionError::Bvh {
        line,
        expected: expected.into(),
        found: found.into(),
    }
}

/// Reads the next token, which must exist.
fn token<'a>(cursor: &mut Cursor<'a>, expected: &str) -> Result<(usize, &'a str), MotionError> {
    cursor
        .next_token()
        .ok_or_else(|| error(cursor.end_line(), expected, END_OF_FILE))
}

/// Reads a keyword (ASCII case ignored) and returns its line.
fn keyword(cursor: &mut Cursor<'_>, word: &str) -> Result<usize, MotionError> {
    let (line, found) = token(cursor, &format!("`{word}`"))?;
    if found.eq_ignore_ascii_case(word) {
        Ok(line)
    } else {
        Err(error(line, format!("`{word}`"), quoted(found)))
    }
}

/// Parses one finite number; `what` names it in the error message and is only called on failure.
fn number(line: usize, token: &str, what: impl FnOnce() -> String) -> Result<f64, MotionError> {
    match token.parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(value),
        _ => Err(error(
            line,
            format!("{} (a finite number)", what()),
            quoted(token),
        )),
    }
}

/// Reads `OFFSET x y z`.
fn offset(cursor: &mut Cursor<'_>) -> Result<DVec3, MotionError> {
    keyword(cursor, "OFFSET")?;
    let mut xyz = [0.0; 3];
    for (value, axis) in xyz.iter_mut().zip(["x", "y", "z"]) {
        let what = format!("OFFSET {axis}");
        let (line, found) = token(cursor, &what)?;
        *value = number(line, found, || what)?;
    }
    Ok(DVec3::from_array(xyz))
}

/// Reads `CHANNELS n name...`.
fn channels(cursor: &mut Cursor<'_>) -> Result<Vec<Channel>, MotionError> {
    keyword(cursor, "CHANNELS")?;
    let what = "a channel count from 1 to 6";
    let (line, found) = token(cursor, what)?;
    let count = match found.parse::<usize>() {
        Ok(n) if (1..=MAX_CHANNELS).contains(&n) => n,
        _ => return Err(error(line, what, quoted(found))),
    };
    let mut list = Vec::with_capacity(count);
    for k in 1..=count {
        let what = format!(
            "channel {k} of {count} (Xposition, Yposition, Zposition, Xrotation, Yrotation or \
             Zrotation, each at most once)"
        );
        let (line, found) = token(cursor, &what)?;
        match Channel::parse(found) {
            Some(channel) if !list.contains(&channel) => list.push(channel),
            _ => return Err(error(line, what, quoted(found))),
        }
    }
    Ok(list)
}

/// A joint as read from the hierarchy.
struct Joint {
    channels: Vec<Channel>,
}

/// Reads a joint after its `ROOT`/`JOINT` keyword (at `line`): name, `{`, `OFFSET`, `CHANNELS`.
fn joint_header(
    cursor: &mut Cursor<'_>,
    line: usize,
    parent: Option<usize>,
    bones: &mut Vec<Bone>,
    joints: &mut Vec<Joint>,
) -> Result<usize, MotionError> {
    let mut words: Vec<&str> = cursor.rest_of_line().collect();
    let brace_on_name_line = words.last() == Some(&"{");
    if brace_on_name_line {
        words.pop();
    }
    if words.is_empty() {
        return Err(error(line, "a joint name", "end of line"));
    }
    let name = words.join(" ");
    if !brace_on_name_line {
        keyword(cursor, "{")?;
    }
    let rest_translation = offset(cursor)?;
    let channels = channels(cursor)?;
    bones.push(Bone {
        name,
        parent,
        rest_translation,
        // BVH's rest pose (OFFSET) has no rotation.
        rest_rotation: glam::DQuat::IDENTITY,
    });
    joints.push(Joint { channels });
    Ok(bones.len() - 1)
}

/// Reads an `End Site { OFFSET x y z }` after its `End` keyword (at `line`).
fn end_site(cursor: &mut Cursor<'_>, line: usize) -> Result<(), MotionError> {
    match cursor.next_token() {
        Some((_, word)) if word.eq_ignore_ascii_case("Site") => {}
        Some((at, word)) => return Err(error(at, "`Site` after `End`", quoted(word))),
        None => return Err(error(line, "`Site` after `End`", END_OF_FILE)),
    }
    keyword(cursor, "{")?;
    offset(cursor)?;
    keyword(cursor, "}")?;
    Ok(())
}

/// Reads `HIERARCHY` through `MOTION`.
fn hierarchy(cursor: &mut Cursor<'_>) -> Result<(Vec<Bone>, Vec<Joint>), MotionError> {
    keyword(cursor, "HIERARCHY")?;
    let mut bones = Vec::new();
    let mut joints = Vec::new();
    // Open joints, innermost last. Iterative, so deep nesting cannot exhaust the call stack.
    let mut open: Vec<usize> = Vec::new();
    loop {
        match open.last().copied() {
            None => {
                let expected = if bones.is_empty() {
                    "`ROOT`"
                } else {
                    "`ROOT` or `MOTION`"
                };
                let (line, word) = token(cursor, expected)?;
                if word.eq_ignore_ascii_case("ROOT") {
                    let index = joint_header(cursor, line, None, &mut bones, &mut joints)?;
                    open.push(index);
                } else if word.eq_ignore_ascii_case("MOTION") && !bones.is_empty() {
                    return Ok((bones, joints));
                } else {
                    return Err(error(line, expected, quoted(word)));
                }
            }
            Some(parent) => {
                let expected = "`JOINT`, `End Site` or `}`";
                let (line, word) = token(cursor, expected)?;
                if word.eq_ignore_ascii_case("JOINT") {
                    let index = joint_header(cursor, line, Some(parent), &mut bones, &mut joints)?;
                    open.push(index);
                } else if word.eq_ignore_ascii_case("End") {
                    end_site(cursor, line)?;
                } else if word == "}" {
                    open.pop();
                } else {
                    return Err(error(line, expected, quoted(word)));
                }
            }
        }
    }
}

/// Reads `Frames: n` and `Frame Time: t` (after `MOTION`).
fn motion_header(cursor: &mut Cursor<'_>) -> Result<(usize, f64), MotionError> {
    keyword(cursor, "Frames:")?;
    let what = "a frame count (a non-negative integer)";
    let (line, found) = token(cursor, what)?;
    let count = found
        .parse::<usize>()
        .map_err(|_| error(line, what, quoted(found)))?;
    keyword(cursor, "Frame")?;
    keyword(cursor, "Time:")?;
    let what = "a frame time in seconds (a finite number > 0)";
    let (line, found) = token(cursor, what)?;
    let frame_time_s = match found.parse::<f64>() {
        Ok(t) if t.is_finite() && t > 0.0 => t,
        _ => return Err(error(line, what, quoted(found))),
    };
    if let Some(extra) = cursor.rest_of_line().next() {
        return Err(error(
            line,
            "end of line after the frame time",
            quoted(extra),
        ));
    }
    Ok((count, frame_time_s))
}

/// Builds one frame's local transforms from its channel values.
fn frame_row(bones: &[Bone], joints: &[Joint], values: &[f64]) -> Vec<LocalTransform> {
    let mut row = Vec::with_capacity(bones.len());
    let mut next = values.iter().copied();
    for (bone, joint) in bones.iter().zip(joints) {
        let mut translation = bone.rest_translation;
        let mut rotation = DQuat::IDENTITY;
        for (&channel, value) in joint.channels.iter().zip(next.by_ref()) {
            match channel {
                Channel::Position(Axis::X) => translation.x = value,
                Channel::Position(Axis::Y) => translation.y = value,
                Channel::Position(Axis::Z) => translation.z = value,
                Channel::Rotation(axis) => {
                    let radians = value.to_radians();
                    let turn = match axis {
                        Axis::X => DQuat::from_rotation_x(radians),
                        Axis::Y => DQuat::from_rotation_y(radians),
                        Axis::Z => DQuat::from_rotation_z(radians),
                    };
                    rotation *= turn;
                }
            }
        }
        row.push(LocalTransform {
            translation,
            rotation,
            scale: DVec3::ONE,
        });
    }
    row
}

/// Parses a BVH text into a [`Clip`] (see the [module documentation](self) for the accepted
/// grammar and how joints, channels and End Sites map onto bones).
///
/// The result has one bone per `ROOT`/`JOINT`, `frame_time_s` from `Frame Time:` (seconds),
/// `Frames:` frames, translations in the file's distance unit, and an empty name.
///
/// # Errors
///
/// [`MotionError::Bvh`] with the line number, what was expected and what was found: for a
/// missing or misplaced keyword, brace or name; a channel count outside 1..=6, an unknown or
/// repeated channel; a number that does not parse or is not finite; a frame time that is not
/// positive; a frame line with too few or too many values; fewer or more frame lines than
/// `Frames:` says.
pub fn parse_bvh(text: &str) -> Result<Clip, MotionError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut cursor = Cursor::new(text);
    let (bones, joints) = hierarchy(&mut cursor)?;
    let (count, frame_time_s) = motion_header(&mut cursor)?;
    let channel_total: usize = joints.iter().map(|j| j.channels.len()).sum();

    // Frames are pushed as they are read; `count` is only compared against.
    let mut frames: Vec<Vec<LocalTransform>> = Vec::new();
    let mut values: Vec<f64> = Vec::with_capacity(channel_total);
    let mut last_line = cursor.line;
    for (index, line_text) in cursor.lines.by_ref() {
        let line = index + 1;
        last_line = line;
        let mut tokens = line_text.split_whitespace().peekable();
        let Some(first) = tokens.peek().copied() else {
            continue;
        };
        if frames.len() == count {
            return Err(error(
                line,
                format!("end of file after the {count} frames given by `Frames:`"),
                quoted(first),
            ));
        }
        let expected = || {
            format!(
                "{channel_total} values for frame {} of {count} (one per channel)",
                frames.len() + 1
            )
        };
        values.clear();
        for token in tokens {
            if values.len() == channel_total {
                return Err(error(line, expected(), "more values"));
            }
            let (value, frame) = (values.len() + 1, frames.len() + 1);
            let what = || format!("value {value} of {channel_total} in frame {frame}");
            values.push(number(line, token, what)?);
        }
        if values.len() != channel_total {
            return Err(error(line, expected(), format!("{} values", values.len())));
        }
        frames.push(frame_row(&bones, &joints, &values));
    }
    if frames.len() < count {
        return Err(error(
            last_line + 1,
            format!("frame {} of {count}", frames.len() + 1),
            END_OF_FILE,
        ));
    }
    let skeleton = Skeleton::new(bones)?;
    Clip::new(String::new(), skeleton, frame_time_s, frames)
}

#[cfg(test)]
mod tests {
    use super::*;
    use statepack_fixtures::fixture_for_test;
    use std::f64::consts::FRAC_PI_2;

    const SMALL: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
  JOINT Left Leg
  {
    OFFSET 0.1 -0.5 0
    CHANNELS 3 Xrotation Yrotation Zrotation
    End Site
    {
      OFFSET 0 -0.4 0
    }
  }
  JOINT Spine {
    OFFSET 0 0.2 0
    CHANNELS 3 Zrotation Xrotation Yrotation
  }
}
MOTION
Frames: 2
Frame Time: 0.5
1 0.9 2  90 0 90  0 0 0  0 0 0
-1 1.0 3  0 0 0  90 0 0  0 0 90
";

    fn quat_close(a: DQuat, b: DQuat) -> bool {
        a.abs_diff_eq(b, 1e-12) || a.abs_diff_eq(-b, 1e-12)
    }

    #[test]
    fn small_file_maps_onto_a_clip() {
        let clip = parse_bvh(SMALL).unwrap();
        let bones = clip.skeleton.bones();
        assert_eq!(bones.len(), 3, "End Site must not become a bone");
        assert_eq!(bones[1].name, "Left Leg");
        assert_eq!(bones[1].parent, Some(0));
        assert_eq!(bones[2].name, "Spine");
        assert_eq!(bones[2].parent, Some(0));
        assert_eq!(bones[1].rest_translation, DVec3::new(0.1, -0.5, 0.0));
        assert_eq!(clip.frame_count(), 2);
        assert_eq!(clip.frame_time_s, 0.5);
        assert_eq!(clip.duration_s(), 0.5);

        let f0 = &clip.frames[0];
        assert_eq!(f0[0].translation, DVec3::new(1.0, 0.9, 2.0));
        // Listed Z then Y then X: R = Rz(90°) * Ry(0) * Rx(90°).
        let expected = DQuat::from_rotation_z(FRAC_PI_2) * DQuat::from_rotation_x(FRAC_PI_2);
        assert!(quat_close(f0[0].rotation, expected));
        // Joints without position channels keep their OFFSET.
        assert_eq!(f0[1].translation, DVec3::new(0.1, -0.5, 0.0));
        assert_eq!(f0[1].scale, DVec3::ONE);

        let f1 = &clip.frames[1];
        assert!(quat_close(
            f1[1].rotation,
            DQuat::from_rotation_x(FRAC_PI_2)
        ));
        // Spine lists Z X Y; its third value is Y.
        assert!(quat_close(
            f1[2].rotation,
            DQuat::from_rotation_y(FRAC_PI_2)
        ));

        // Order matters: X then Z differs from Z then X.
        let swapped = DQuat::from_rotation_x(FRAC_PI_2) * DQuat::from_rotation_z(FRAC_PI_2);
        assert!(!quat_close(f0[0].rotation, swapped));
    }

    #[test]
    fn rotation_order_follows_channel_list() {
        let text =
            "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Xrotation Yrotation Zrotation\n}\n\
                    MOTION\nFrames: 1\nFrame Time: 0.1\n30 40 50\n";
        let clip = parse_bvh(text).unwrap();
        let (x, y, z) = (30f64.to_radians(), 40f64.to_radians(), 50f64.to_radians());
        let expected =
            DQuat::from_rotation_x(x) * DQuat::from_rotation_y(y) * DQuat::from_rotation_z(z);
        assert!(quat_close(clip.frames[0][0].rotation, expected));
    }

    fn bvh_error(text: &str) -> (usize, String) {
        match parse_bvh(text) {
            Err(MotionError::Bvh { line, .. }) => (line, parse_bvh(text).unwrap_err().to_string()),
            other => panic!("expected a BVH error, got {other:?}"),
        }
    }

    #[test]
    fn errors_name_line_and_expectation() {
        // Wrong number of values on a frame line.
        let text = SMALL.replace("-1 1.0 3  0 0 0", "-1 1.0 3  0 0");
        let (line, message) = bvh_error(&text);
        assert_eq!(line, 24, "{message}");
        assert!(message.contains("12 values for frame 2 of 2"), "{message}");
        assert!(message.contains("found 11 values"), "{message}");

        let text = SMALL.replace("-1 1.0 3  0 0 0", "-1 1.0 3  0 0 0 0");
        let (line, message) = bvh_error(&text);
        assert_eq!(line, 24);
        assert!(message.contains("more values"), "{message}");

        // Fewer frames than announced.
        let (line, message) = bvh_error(&SMALL.replace("Frames: 2", "Frames: 3"));
        assert_eq!(line, 25);
        assert!(message.contains("frame 3 of 3"), "{message}");
        assert!(message.contains("end of file"), "{message}");

        // More frames than announced.
        let (line, message) = bvh_error(&SMALL.replace("Frames: 2", "Frames: 1"));
        assert_eq!(line, 24);
        assert!(
            message.contains("end of file after the 1 frames"),
            "{message}"
        );

        // A hostile frame count is compared, not allocated.
        let (_, message) = bvh_error(&SMALL.replace("Frames: 2", "Frames: 18446744073709551615"));
        assert!(
            message.contains("frame 3 of 18446744073709551615"),
            "{message}"
        );

        let (line, message) = bvh_error(&SMALL.replace("OFFSET 0.1 -0.5 0", "OFFSET 0.1 nan 0"));
        assert_eq!(line, 8);
        assert!(message.contains("OFFSET y"), "{message}");

        let (line, message) = bvh_error(&SMALL.replace(
            "CHANNELS 3 Xrotation Yrotation",
            "CHANNELS 3 Xrotation Xrotation",
        ));
        assert_eq!(line, 9);
        assert!(message.contains("channel 2 of 3"), "{message}");

        let (_, message) =
            bvh_error(&SMALL.replace("CHANNELS 3 Zrotation Xrotation Yrotation", "CHANNELS 0"));
        assert!(message.contains("channel count from 1 to 6"), "{message}");
        let (_, message) = bvh_error(&SMALL.replace("CHANNELS 6", "CHANNELS 7"));
        assert!(message.contains("channel count"), "{message}");

        let (line, message) = bvh_error(&SMALL.replace("Frame Time: 0.5", "Frame Time: 0"));
        assert_eq!(line, 22);
        assert!(message.contains("frame time"), "{message}");

        let (line, message) = bvh_error(&SMALL.replace("1 0.9 2", "1 inf 2"));
        assert_eq!(line, 23);
        assert!(message.contains("value 2 of 12 in frame 1"), "{message}");

        let (line, message) = bvh_error(&SMALL.replace("    End Site\n", "    End Zone\n"));
        assert_eq!(line, 10);
        assert!(message.contains("`Site` after `End`"), "{message}");

        let (line, message) = bvh_error(&SMALL.replace("JOINT Left Leg", "JOINT"));
        assert_eq!(line, 6);
        assert!(message.contains("joint name"), "{message}");

        let (line, message) = bvh_error("HIERARCHY\nMOTION\n");
        assert_eq!(line, 2);
        assert!(message.contains("expected `ROOT`"), "{message}");

        let (line, message) = bvh_error("");
        assert_eq!(line, 1);
        assert!(
            message.contains("`HIERARCHY`") && message.contains("end of file"),
            "{message}"
        );
    }

    #[test]
    fn tolerates_crlf_bom_blank_lines_and_zero_frames() {
        let text = format!("\u{feff}{}", SMALL.replace('\n', "\r\n\r\n"));
        let clip = parse_bvh(&text).unwrap();
        assert_eq!(clip.frame_count(), 2);
        let zero = SMALL.replace("Frames: 2", "Frames: 0");
        let cut = zero.find("1 0.9 2").unwrap();
        let clip = parse_bvh(&zero[..cut]).unwrap();
        assert_eq!(clip.frame_count(), 0);
        assert_eq!(clip.skeleton.len(), 3);
    }

    #[test]
    fn multiple_roots() {
        let text =
            "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Xposition Yposition Zposition\n}\n\
                    ROOT b\n{\nOFFSET 1 0 0\nCHANNELS 1 Yrotation\n}\nMOTION\nFrames: 1\n\
                    Frame Time: 0.1\n1 2 3 45\n";
        let clip = parse_bvh(text).unwrap();
        assert_eq!(clip.skeleton.len(), 2);
        assert_eq!(clip.skeleton.bones()[1].parent, None);
        assert_eq!(clip.frames[0][1].translation, DVec3::new(1.0, 0.0, 0.0));
    }

    #[test]
    fn every_prefix_and_garbage_is_handled_without_panic() {
        for (cut, _) in SMALL.char_indices() {
            let prefix = &SMALL[..cut];
            // A prefix that stops right after a complete frame line can be a valid file only
            // if it holds every announced frame; all others must be errors.
            if let Ok(clip) = parse_bvh(prefix) {
                assert_eq!(clip.frame_count(), 2, "prefix of {cut} bytes");
            }
        }
        assert!(parse_bvh(SMALL).is_ok());
        let garbage = [
            "\0\0\0",
            "}}}}",
            "HIERARCHY {",
            "HIERARCHY ROOT",
            "HIERARCHY ROOT x { OFFSET 1 2 3 CHANNELS 99999999999999999999999",
            "HIERARCHY ROOT x { OFFSET 1 2 3 CHANNELS 3 Xrotation Yrotation Zrotation } MOTION \
             Frames: -1",
            "HIERARCHY ROOT x { OFFSET 1 2 3 CHANNELS 3 Xrotation Yrotation Zrotation } MOTION \
             Frames: 1 Frame Time: 1e400",
            "HIERARCHY ROOT x { OFFSET 1 2 3 CHANNELS 3 Xrotation Yrotation Zrotation } MOTION \
             Frames: 1 Frame Time: 0.1 1 2 3",
            "HIERARCHY ROOT x { OFFSET 1 2 3 CHANNELS 3 Xrotation Yrotation Zrotation }\nMOTION \
             Frames: 1 Frame Time: 0.1\n1e308 -1e308 1e-320",
            "ROOT ü { OFFSET ✓ ✓ ✓",
            "HIERARCHY\nROOT\u{2028}x\n{\n",
            "\u{feff}\u{feff}HIERARCHY",
        ];
        for text in garbage {
            let _ = parse_bvh(text);
        }
        // Deep nesting is handled iteratively.
        let mut deep = String::from("HIERARCHY\n");
        for i in 0..20_000 {
            deep.push_str(if i == 0 { "ROOT" } else { "JOINT" });
            deep.push_str(" j\n{\nOFFSET 0 1 0\nCHANNELS 1 Xrotation\n");
        }
        assert!(parse_bvh(&deep).is_err());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
            let _ = parse_bvh(&text);
        }

        #[test]
        fn token_soup_never_panics(
            tokens in proptest::collection::vec(
                proptest::sample::select(vec![
                    "HIERARCHY", "ROOT", "JOINT", "End", "Site", "{", "}", "OFFSET", "CHANNELS",
                    "3", "6", "1", "0", "-2.5", "Xposition", "Zrotation", "Yrotation",
                    "MOTION", "Frames:", "Frame", "Time:", "0.1", "\n", "nan", "x",
                ]),
                0..80,
            )
        ) {
            let _ = parse_bvh(&tokens.join(" "));
        }

        #[test]
        fn mutated_small_file_never_panics(cut in 0usize..600, byte in 0u8..128) {
            let mut bytes = SMALL.as_bytes().to_vec();
            let at = cut % bytes.len();
            bytes[at] = byte;
            if let Ok(text) = std::str::from_utf8(&bytes) {
                let _ = parse_bvh(text);
            }
        }
    }

    #[test]
    fn cmu_walk_fixture() {
        let Some(path) = fixture_for_test("motion/cmu-131-01-walk.bvh") else {
            return;
        };
        let text = std::fs::read_to_string(&path).unwrap();
        let clip = parse_bvh(&text).unwrap();
        assert_eq!(clip.skeleton.len(), 31);
        assert_eq!(clip.frame_count(), 995);
        assert_eq!(clip.frame_time_s, 0.008333);
        assert!((clip.fps() - 120.0).abs() < 0.01);
        assert_eq!(clip.skeleton.bones()[0].name, "Hips");

        let root = |f: usize| clip.frames[f][0].translation;
        let (first, last) = (root(0), root(clip.frame_count() - 1));
        println!("cmu-131-01 root position, frame 0: {first:.4} m; frame 994: {last:.4} m");
        let travel = (last - first).length();
        println!(
            "cmu-131-01 root travel: {travel:.3} m over {:.2} s",
            clip.duration_s()
        );
        for f in 0..clip.frame_count() {
            let p = root(f);
            // Hips of an adult, in metres: the clip dips to about 0.5 m (a crouch between
            // roughly 2.8 s and 3.9 s) and otherwise stays near 0.9 m; always within a few
            // metres of the capture origin.
            assert!((0.4..1.3).contains(&p.y), "frame {f}: hips height {}", p.y);
            assert!(p.x.abs() < 10.0 && p.z.abs() < 10.0, "frame {f}: {p}");
        }
        let lowest_hips = (0..clip.frame_count())
            .map(|f| root(f).y)
            .fold(f64::INFINITY, f64::min);
        println!("cmu-131-01 lowest hips height: {lowest_hips:.4} m");
        assert!(travel > 1.0 && travel < 15.0, "travel {travel}");

        // After forward kinematics the toes are near the floor.
        let toe = clip.skeleton.find("LeftToe").unwrap();
        let lowest = (0..clip.frame_count())
            .map(|f| clip.world_pose(f)[toe].position.y)
            .fold(f64::INFINITY, f64::min);
        println!("cmu-131-01 lowest left toe height: {lowest:.4} m");
        assert!(lowest.abs() < 0.15, "lowest toe {lowest}");
    }
}
