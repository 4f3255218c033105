"""Parsing: bytes on disk -> decoded text -> frontmatter data, with no judgement.

- :mod:`.reader`: bounded, non-blocking reads of regular files (a FIFO or a device is
  a failure, never a hang).
- :mod:`.frontmatter`: the byte and YAML layers of a finding (encoding, fences, the
  loader that keeps huge integers as text), failures as data.
- :mod:`.fastparse`: the common-case finding parser that the hot path uses, proven
  equal to the full parser by a differential test.
"""
