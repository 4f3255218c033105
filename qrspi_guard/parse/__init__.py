"""Parsing: bytes on disk -> decoded text -> frontmatter data, with no judgement.

- :mod:`.reader`: bounded, non-blocking reads of regular files (a FIFO or a device is
  a failure, never a hang).
- :mod:`.capped`: the one size cap of every untrusted byte source (a file, a git blob,
  standard input, the hook's payload) and the one reader that holds to it.
- :mod:`.nofollow`: a run's `reviews/`, step and round directories opened without
  following symbolic links, as descriptors every read and write is relative to.
- :mod:`.frontmatter`: the byte and YAML layers of a finding (encoding, fences, the
  loader that keeps huge integers as text), failures as data.
- :mod:`.jsondoc`: every JSON read and written, under one set of rules (no NaN or
  Infinity, no duplicate key, bounded depth and digits), failures as one named line.
- :mod:`.fastparse`: the common-case finding parser that the hot path uses, proven
  equal to the full parser by a differential test.
"""
