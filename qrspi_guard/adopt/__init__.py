"""`qrspi-guard adopt` and `doctor`: the guard dropped into an upstream checkout, and
what is in place.

An upstream checkout (``dfrysinger/qrspi-plus``) runs four deterministic steps of each
review round as bash scripts; adopting it replaces each script with a wrapper that runs
this guard's drop-in by its absolute path, and keeps the script it replaced so that
undo puts it back byte for byte, mode too.

- :mod:`.dropins`: the four scripts, their commands, and the versions of each that
  adopt knows (sha256), listed once;
- :mod:`.wrapper`: a wrapper's text, and reading one back (is it ours, which guard);
- :mod:`.store`: where the originals are kept (the git directory, else a dot
  directory) and the manifest that records them, every write anchored and atomic;
- :mod:`.plan`: what adopt or undo would do to each script, decided from what is on
  disk (no writes);
- :mod:`.run`: adopt and undo, under the checkout's lock: the plan carried out in an
  order a kill at any point leaves resumable;
- :mod:`.extras`: what adopt can also set up in the project (the hook through
  ``hook install``'s core, the pre-commit entry, a baseline through ``check
  --write-baseline``'s core) and undo removes; :mod:`.precommit`: that entry, appended
  to and removed from the user's config as text;
- :mod:`.doctor`: one screen of what is in place and what is not.

No printing, no exits, no click: :mod:`qrspi_guard.cli.adopt` and
:mod:`qrspi_guard.cli.doctor` render the results.
"""
