"""The contract: what a review round may hold, defined once.

:mod:`.generations` holds the finding contract (fields, enums, the tag grammar, the
boundary marker, size limits) and each protocol generation as a value (sidecar
grammar, verifier outputs, recount thresholds, score reading). The rules, the fast
path's patterns, the hook's guidance, ``schema`` and ``explain`` are derived from these
values, so a changed rule cannot miss one of them. :mod:`.digits`: how many digits a
number read from untrusted text may have (importing nothing: the hook's payload reader
uses it).
"""
