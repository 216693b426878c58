meta:
  id: real_pe
  endian: le
doc: |
  A Windows executable (PE/COFF image), as Microsoft's PE format documentation lays it out:
  the MZ header, whose `e_lfanew` (at byte 0x3c) gives the offset of the PE header; the
  signature `PE\0\0`, the COFF file header, the optional header (PE32 or PE32+, told by its
  magic) ending in its data directories, and the section table; each section's raw data at
  its file offset. A data directory gives a relative virtual address (RVA); each section
  tells whether its virtual range holds the debug directory's RVA and maps it to a file
  offset (`holds_debug`, `debug_offset`). The writer places the PE header
  and the sections' data, and derives `e_lfanew`, the section and data directory counts, the
  optional header's size and each section's raw size and file offset. Read, edited and
  written back in codegen/tests/real_formats_b.rs.
seq:
  - id: mz
    type: mz_header
instances:
  pe:
    pos: mz.ofs_pe_header
    type: pe_header
types:
  mz_header:
    seq:
      - id: magic
        contents: MZ
      - id: fields
        size: 0x3a
        doc: The DOS header's fields between the magic and `e_lfanew`.
      - id: ofs_pe_header
        type: u4
        doc: '`e_lfanew`: the file offset of the PE signature.'
  pe_header:
    seq:
      - id: signature
        contents: [P, E, 0, 0]
      - id: machine
        type: u2
      - id: number_of_sections
        type: u2
      - id: time_date_stamp
        type: u4
      - id: pointer_to_symbol_table
        type: u4
      - id: number_of_symbols
        type: u4
      - id: size_of_optional_header
        type: u2
      - id: characteristics
        type: u2
      - id: optional_header
        type: optional_header
        size: size_of_optional_header
      - id: sections
        type: section
        repeat: expr
        repeat-expr: number_of_sections
  optional_header:
    seq:
      - id: magic
        type: u2
        doc: 0x10b for PE32, 0x20b for PE32+.
      - id: major_linker_version
        type: u1
      - id: minor_linker_version
        type: u1
      - id: size_of_code
        type: u4
      - id: size_of_initialized_data
        type: u4
      - id: size_of_uninitialized_data
        type: u4
      - id: address_of_entry_point
        type: u4
      - id: base_of_code
        type: u4
      - id: base_of_data
        type: u4
        if: magic == 0x10b
      - id: image_base
        type:
          switch-on: magic
          cases:
            0x10b: u4
            0x20b: u8
      - id: section_alignment
        type: u4
      - id: file_alignment
        type: u4
      - id: os_version
        type: u2
        repeat: expr
        repeat-expr: 2
      - id: image_version
        type: u2
        repeat: expr
        repeat-expr: 2
      - id: subsystem_version
        type: u2
        repeat: expr
        repeat-expr: 2
      - id: win32_version_value
        type: u4
      - id: size_of_image
        type: u4
      - id: size_of_headers
        type: u4
      - id: checksum
        type: u4
      - id: subsystem
        type: u2
      - id: dll_characteristics
        type: u2
      - id: stack_and_heap
        doc: Stack reserve and commit, heap reserve and commit.
        type:
          switch-on: magic
          cases:
            0x10b: u4
            0x20b: u8
        repeat: expr
        repeat-expr: 4
      - id: loader_flags
        type: u4
      - id: number_of_rva_and_sizes
        type: u4
      - id: data_dirs
        type: data_dir
        repeat: expr
        repeat-expr: number_of_rva_and_sizes
  data_dir:
    seq:
      - id: virtual_address
        type: u4
        doc: An RVA, 0 when the directory is absent.
      - id: size
        type: u4
  section:
    seq:
      - id: name
        type: strz
        size: 8
        encoding: ASCII
      - id: virtual_size
        type: u4
      - id: virtual_address
        type: u4
      - id: size_of_raw_data
        type: u4
      - id: pointer_to_raw_data
        type: u4
      - id: pointer_to_relocations
        type: u4
      - id: pointer_to_linenumbers
        type: u4
      - id: number_of_relocations
        type: u2
      - id: number_of_linenumbers
        type: u2
      - id: characteristics
        type: u4
    instances:
      body:
        pos: pointer_to_raw_data
        size: size_of_raw_data
      debug_rva:
        value: '_parent.optional_header.data_dirs.size > 6 ? _parent.optional_header.data_dirs[6].virtual_address : 0'
        doc: The RVA of the debug directory (data directory 6), 0 when there is none.
      holds_debug:
        value: debug_rva != 0 and debug_rva >= virtual_address and debug_rva < virtual_address + virtual_size
        doc: Whether this section's virtual range holds the debug directory's RVA.
      debug_offset:
        value: pointer_to_raw_data + (debug_rva - virtual_address)
        doc: |
          The debug directory's RVA mapped to a file offset through this section (meaningful
          in the section that `holds_debug`).
