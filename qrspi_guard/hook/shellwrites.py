"""What a shell command writes, read from its command line (cli.md, the hook paragraph).

:func:`writes` reads a command as a shell would split it (quotes, ``;``, ``&&``, ``|``,
new lines, here-documents) and returns the files it writes or changes: redirections
(``>``, ``>>``, ``&>``, ``>|``), ``tee``, ``sed -i`` and ``perl -i``, ``cp``, ``mv``,
``install`` and ``ln`` (their destination), ``touch``, ``truncate``, ``dd of=``,
``mkdir``, ``chmod``. Commands that only read or list (``cat``, ``ls``, ``grep``...)
write nothing. Anything else (a script, an interpreter, a path held in a variable) is
*opaque*: its writes cannot be read from the command line, and the answer says so.

:func:`record` and :func:`changed` are the fallback for opaque commands: the pre-tool-use
call records the state (inode, size, modification time) of every entry of the rounds
the command names, and the post-tool-use call compares, so only what changed during
the call is judged. Without a record the hook cannot tell, and judges nothing beyond
what the command line shows. Pure but for that small state file in the temporary
directory; no printing.
"""

from __future__ import annotations

import glob
import os
import re
import shlex

#: commands that only read, list or print: they write nothing but their redirections
READ_ONLY = frozenset("""
    cat tac ls dir grep egrep fgrep rg ag head tail wc stat file less more echo printf
    true false test [ pwd diff cmp sort cut tr jq yq column nl fold comm
    tree du df basename dirname realpath readlink which type command sleep date
    sha1sum sha256sum md5sum xxd od hexdump strings uniq env printenv id whoami
    """.split())
#: git subcommands that write nothing in the working tree
GIT_READ = frozenset("status diff log show ls-files rev-parse blame grep branch".split())
#: words in front of a command that do not change what it writes
PREFIXES = frozenset("sudo nohup time nice exec builtin".split())
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "\n", "(", ")", "|&", ";;"})
_HEREDOC = re.compile(r"<<-?\s*(?:'([^'\n]*)'|\"([^\"\n]*)\"|\\?([^\s;&|<>()]+))")
_EXPANSION = re.compile(r"[$`]")
_GLOB = re.compile(r"[*?\[]")


class Opaque(Exception):
    """The command's writes cannot be read from its command line."""


def _strip_heredocs(command: str) -> str:
    """*command* with the bodies of its here-documents left out (they are data)."""
    lines = command.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        for m in _HEREDOC.finditer(line):
            if line[m.start():m.start() + 3] == "<<<":
                continue
            delimiter = next(g for g in m.groups() if g is not None)
            dash = line[m.start():m.start() + 3] == "<<-"
            while i < len(lines):
                body = lines[i].lstrip("\t") if dash else lines[i]
                i += 1
                if body == delimiter:
                    break
    return "\n".join(out)


def _tokens(command: str) -> list[str]:
    lexer = shlex.shlex(_strip_heredocs(command), posix=True, punctuation_chars=";&|<>()\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote: not something to read writes from
        raise Opaque from None


def _simple_commands(tokens: list[str]) -> list[tuple[list[str], list[str]]]:
    """(words, redirection targets that are written) of each simple command."""
    out: list[tuple[list[str], list[str]]] = []
    words: list[str] = []
    targets: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if tok in _SEPARATORS:
            if words or targets:
                out.append((words, targets))
            words, targets = [], []
            continue
        if tok and set(tok) <= set("<>&|"):
            target = tokens[i] if i < len(tokens) else ""
            i += 1
            if ">" not in tok:
                continue  # input: <, <<, <<<
            if tok.endswith("&") and (target.isdigit() or target == "-"):
                continue  # 2>&1: a descriptor, not a file
            if words and words[-1].isdigit():
                words.pop()  # the descriptor number of `2> file`
            targets.append(target)
            continue
        words.append(tok)
    if words or targets:
        out.append((words, targets))
    return out


def _operands(args: list[str], with_value: frozenset[str] = frozenset()) -> list[str]:
    """*args* without their options (``--`` ends them; *with_value* options take the
    next word)."""
    out: list[str] = []
    i, ended = 0, False
    while i < len(args):
        a = args[i]
        i += 1
        if ended or not a.startswith("-") or a == "-":
            out.append(a)
        elif a == "--":
            ended = True
        elif a in with_value:
            i += 1
    return out


def _copy_like(args: list[str]) -> list[str]:
    target_dir = None
    rest: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a in ("-t", "--target-directory"):
            target_dir = args[i] if i < len(args) else None
            i += 1
        elif a.startswith("--target-directory="):
            target_dir = a.split("=", 1)[1]
        elif a in ("-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"):
            i += 1
        elif a.startswith("-") and a != "-":
            continue
        else:
            rest.append(a)
    if target_dir is None:
        if len(rest) < 2:
            return []
        *sources, dest = rest
    else:
        sources, dest = rest, target_dir
    return [f"{dest}\0{s}" for s in sources]  # resolved against the disk later


def _in_place(args: list[str], script_options: frozenset[str], perl: bool) -> list[str]:
    """The files ``sed -i`` / ``perl -i`` rewrite; none without ``-i``."""
    in_place, has_script, files, i = False, False, [], 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--in-place" or a.startswith("--in-place="):
            in_place = True
        elif a in script_options or a.startswith("--expression"):
            has_script = True
            if "=" not in a:
                i += 1
        elif a.startswith("-") and len(a) > 1 and not a.startswith("--"):
            letters = a[1:]
            if perl:
                letters = letters.split("e")[0] if "e" in letters else letters
                if "e" in a[1:]:
                    has_script = True
                    i += 1
            if "i" in letters:
                in_place = True
                if not perl:  # sed: what follows -i is its backup suffix (-i.bak)
                    letters = letters[:letters.index("i")]
            if not perl and "e" in letters:
                has_script = True
                i += 1
            if not perl and "f" in letters:
                has_script = True
                i += 1
        elif a.startswith("--"):
            continue
        else:
            files.append(a)
    if not in_place:
        return []
    return files if has_script else files[1:]


def _command_writes(words: list[str]) -> list[str]:
    """The files one simple command writes (its redirections aside)."""
    while words and (re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0])
                     or words[0] in PREFIXES):
        words = words[1:]
    if not words:
        return []
    name, args = os.path.basename(words[0]), words[1:]
    if name in READ_ONLY:
        if name == "sort" and any(a == "-o" or a.startswith(("-o", "--output")) for a in args):
            raise Opaque
        if name == "uniq" and len(_operands(args)) > 1:
            return _operands(args)[1:2]
        return []
    if name == "git":
        sub = next((a for a in args if not a.startswith("-")), "")
        if sub in GIT_READ:
            return []
        raise Opaque
    if name == "find":
        if any(a in ("-delete", "-exec", "-execdir", "-ok", "-fprint", "-fprintf", "-fls")
               for a in args):
            raise Opaque
        return []
    if name == "tee":
        return _operands(args)
    if name in ("sed", "gsed"):
        return _in_place(args, frozenset({"-e", "-f", "--file"}), perl=False)
    if name == "perl":
        files = _in_place(args, frozenset(), perl=True)
        if not files:
            raise Opaque  # perl can write anything
        return files
    if name in ("cp", "mv", "install", "ln"):
        return _copy_like(args)
    if name in ("touch", "mkdir", "chmod"):
        ops = _operands(args, frozenset({"-m", "--mode", "-r", "--reference", "-d", "-t"}))
        return ops[1:] if name == "chmod" else ops
    if name == "truncate":
        return _operands(args, frozenset({"-s", "--size", "-r", "--reference"}))
    if name == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    if name in ("rm", "unlink", "rmdir"):
        return []  # nothing left to judge
    raise Opaque


def _expand(word: str, base: str) -> list[str]:
    if not word or _EXPANSION.search(word):
        raise Opaque
    path = os.path.join(base, os.path.expanduser(word))
    if _GLOB.search(word):
        return sorted(glob.glob(path)) or [path]
    return [path]


def _resolve(item: str, base: str) -> list[str]:
    """Absolute paths for one written word (``dest\\0source`` for a copy)."""
    if "\0" not in item:
        return _expand(item, base)
    dest, source = item.split("\0", 1)
    out = []
    for d in _expand(dest, base):
        for s in _expand(source, base):
            if os.path.isdir(s) and not os.path.islink(s):
                raise Opaque  # a tree copied: which files landed is not on the line
            out.append(os.path.join(d, os.path.basename(s)) if os.path.isdir(d) else d)
    return out


def writes(command: str, base: str) -> tuple[list[str], bool]:
    """(the absolute paths *command* writes or changes, as far as its command line
    says; whether some of its writes cannot be read from it). ``cd DIR`` moves where
    later relative paths start."""
    try:
        commands = _simple_commands(_tokens(command))
    except Opaque:
        return [], True
    found: list[str] = []
    opaque = False
    lost = False  # a `cd` whose directory cannot be read: relative paths mean nothing
    for words, targets in commands:
        items = list(targets)
        try:
            if words and words[0] in ("cd", "pushd", "popd") and not targets:
                if words[0] != "cd" or len(words) != 2:
                    raise Opaque
                base = _expand(words[1], base)[0]
                continue
            items += _command_writes(words)
        except Opaque:
            opaque = True
            if words and words[0] in ("cd", "pushd", "popd"):
                lost = True
        for item in items:
            try:
                if lost and not os.path.isabs(item.split("\0", 1)[0]):
                    raise Opaque
                found.extend(p for p in _resolve(item, base) if p not in found)
            except Opaque:
                opaque = True
    return found, opaque


# -- the state of the named rounds, recorded before an opaque command ---------------------


def _state_path(key: str) -> str:
    import hashlib
    import tempfile

    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:40]
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return os.path.join(tempfile.gettempdir(), f"qrspi-guard-hook-{uid}", f"{digest}.json")


def _snapshot(round_dirs: list[str]) -> dict[str, dict[str, list[int]]]:
    out: dict[str, dict[str, list[int]]] = {}
    for d in round_dirs:
        entries: dict[str, list[int]] = {}
        try:
            with os.scandir(d) as it:
                for e in it:
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    entries[e.name] = [st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode]
        except OSError:
            continue
        out[d] = entries
    return out


def record(key: str, round_dirs: list[str]) -> None:
    """Before the call: the state of every entry of *round_dirs*, under *key*. A
    failure to record is silent: the post call then cannot tell, and says nothing."""
    import json

    path = _state_path(key)
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        if not _own_private_dir(os.path.dirname(path)):
            return  # another user's, or a link: record nothing (the post call then says nothing)
        _prune(os.path.dirname(path))
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as f:
            json.dump(_snapshot(round_dirs), f)
        os.replace(tmp, path)
    except OSError:
        pass


def _own_private_dir(directory: str) -> bool:
    import stat

    st = os.lstat(directory)
    uid = os.getuid() if hasattr(os, "getuid") else st.st_uid
    return stat.S_ISDIR(st.st_mode) and st.st_uid == uid and not st.st_mode & 0o077


#: a record older than this was left by a call that never ran (refused, interrupted)
STALE_SECONDS = 3600


def _prune(directory: str) -> None:
    import time

    cutoff = time.time() - STALE_SECONDS
    try:
        with os.scandir(directory) as it:
            for i, e in enumerate(it):
                if i >= 256:
                    break
                try:
                    if e.stat(follow_symlinks=False).st_mtime < cutoff:
                        os.unlink(e.path)
                except OSError:
                    continue
    except OSError:
        pass


def changed(key: str) -> list[str] | None:
    """After the call: the entries of the recorded rounds that are new or changed
    (absolute paths), or None when nothing was recorded under *key*."""
    import json

    path = _state_path(key)
    try:
        if not _own_private_dir(os.path.dirname(path)):
            return None
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            before = json.load(f)
        os.unlink(path)
    except (OSError, ValueError):
        return None
    if not isinstance(before, dict):
        return None
    now = _snapshot([d for d in before if isinstance(d, str)])
    out: list[str] = []
    for d, entries in now.items():
        old = before.get(d) or {}
        out.extend(os.path.join(d, name) for name, st in sorted(entries.items())
                   if old.get(name) != st)
    return out
