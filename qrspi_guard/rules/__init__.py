"""The rules: pure functions from parsed files and round facts to diagnostics.

Every rule is a registered unit in :mod:`.registry` (its id, scope, causes and check);
the modules that implement them:

- :mod:`.filejudge`   one file judged: name rule, bytes, frontmatter, the pipeline below
- :mod:`.finding`     a finding's fields, references, artifact, body (§2-§3)
- :mod:`.fields`      shared field checks (enums, round pins, unknown keys)
- :mod:`.sentinels`   clean sentinels and the verifier's skip/bypass sentinels (§4)
- :mod:`.sidecars`    verifier sidecars, both generations' grammars (§6)
- :mod:`.fastjudge`   the fast acceptance path: valid files accepted without messages
- :mod:`.facts`       what a judged file leaves for the round rules (facts, reports)
- :mod:`.rounds`      rules over a tag's files and over a whole round (§4-§5)
- :mod:`.verifier`    the verifier's results and the fan-in's recount (generations.md)
- :mod:`.inputs`      the round's inputs interpreted (manifests, markers, anchors)
- :mod:`.bookkeeping` the bookkeeping files' grammars (commit anchor, scope set)
- :mod:`.placement`   a round's number from its findings, suffixed dirs, the route
- :mod:`.splitresidue` split's reserved residue (`split_incomplete`)
- :mod:`.config`      config.md (§7)
- :mod:`.registry`    every rule as a unit; the scopes the hook and JUnit derive from
"""
