meta:
  id: two_documents
seq:
  - id: a
    type: u1
---
meta:
  id: other
