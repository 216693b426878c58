meta:
  id: game_save
  title: Saved game of a small arena game
  endian: le
  encoding: UTF-8
  imports:
    - vec2
doc: |
  A saved game: the map's name, the tick it was saved at, and every player with a team,
  a score, a position and a few flags. This schema belongs to the example crate; it shows
  the parts of the schema language most user formats need.
seq:
  - id: magic
    contents: GSAV
  - id: version
    type: u1
    valid: 1
    doc: Layout version; readers refuse any other.
  - id: len_map_name
    type: u1
  - id: map_name
    type: str
    size: len_map_name
  - id: tick
    type: u4
    -sp-units: frames
    doc: Simulation tick at which the game was saved (60 per second).
  - id: num_players
    type: u1
  - id: players
    type: player
    repeat: expr
    repeat-expr: num_players
types:
  player:
    seq:
      - id: len_name
        type: u1
      - id: name
        type: str
        size: len_name
      - id: team
        type: u1
        enum: team
      - id: score
        type: u4
      - id: pos
        type: vec2
      - id: alive
        type: b1
        doc: Still in the round.
      - id: bot
        type: b1
        doc: Played by the computer.
      - id: level
        type: b6
        doc: Experience level, 0 to 63.
enums:
  team:
    0: red
    1: blue
