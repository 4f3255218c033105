"""Bash's grammar, as far as the hook needs it, and what each program writes.

The hook reads a shell tool call's command line as bash reads it, to name what the
command visibly writes (:mod:`qrspi_guard.hook.shellwrites` walks the tree):

- :mod:`~qrspi_guard.hook.bash.tokens`: words, their quoted and expanded parts,
  redirections;
- :mod:`~qrspi_guard.hook.bash.lexer`: text to tokens (quotes, comments,
  continuations, here-documents, substitutions);
- :mod:`~qrspi_guard.hook.bash.grammar`: tokens to simple commands, subshells, lists;
- :mod:`~qrspi_guard.hook.bash.fields`: a word's fields (brace and tilde expansion,
  globs);
- :mod:`~qrspi_guard.hook.bash.options`: a program's options, read as GNU getopt does;
- :mod:`~qrspi_guard.hook.bash.programs`: the table of programs and what each writes;
- :mod:`~qrspi_guard.hook.bash.runners`: the programs that run their arguments;
- :mod:`~qrspi_guard.hook.bash.sed`: the files a sed script writes.

Hand-written rather than a parser from PyPI (README, "The hook's shell parser"): pure
Python, standard library only, imported only for a shell call that can reach a round.
"""
