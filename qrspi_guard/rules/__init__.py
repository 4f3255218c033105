"""The rules: pure functions from parsed files and round facts to diagnostics.

- :mod:`.files`  per-file rules (finding, clean sentinel, sidecar), §2-§4, §6
- :mod:`.rounds` rules over a tag's files and over a whole round, §4-§5
- :mod:`.config`   config.md, §7
"""
