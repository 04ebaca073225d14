# SPDX-License-Identifier: Apache-2.0
"""Holds rtprov's --json outputs against docs/json.md.

Usage: json_docs_check.py DOC OUTPUT...   (each OUTPUT named KIND.ANYTHING.json)
       json_docs_check.py --guest[=PREFIX] DOC OUTPUT... (the booted guest's outputs: only
           the rows marked '*(booted guest)*' must be held, those whose key starts with
           PREFIX when given (a scenario's own: 'cores[]', 'audio'), and every key seen is
           checked)
       json_docs_check.py --dump OUTPUT... (the keys and types seen, as table rows)

In the document each output is a section '## `rtprov.KIND`' with a line
'schema_version: N' and a table whose rows are '| `PATH` | TYPE | meaning |': PATH is
dotted, '[]' stands for every element of an array, TYPE is one of string, integer,
number, boolean, object, array, map (an object whose keys are data: not descended), with
' or null' when the value may be null. Every key an output holds must be documented with
its type; every documented key must be held by one of the outputs of its kind, except a
row marked '*(no test provokes this)*' or '*(booted guest)*', whose type is still
checked when it is seen; with --guest, the rows marked '*(booted guest)*' must be.
"""
import json
import re
import sys

TYPES = {"string", "integer", "number", "boolean", "object", "array", "map"}


def type_of(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def walk(value, path, seen, maps):
    """(path, type) of every value below 'value' into 'seen'."""
    if isinstance(value, dict):
        for key, member in value.items():
            sub = f"{path}.{key}" if path else key
            seen.add((sub, type_of(member)))
            if sub in maps and isinstance(member, dict):
                for item in member.values():
                    seen.add((sub + ".*", type_of(item)))
                continue
            walk(member, sub, seen, maps)
    elif isinstance(value, list):
        for item in value:
            seen.add((path + "[]", type_of(item)))
            walk(item, path + "[]", seen, maps)


def read_doc(name):
    """{kind: [version, {path: set of types}, unprovoked paths, booted guest paths]}, and
    problems with the document itself."""
    doc, problems, kind = {}, [], None
    for number, line in enumerate(open(name, encoding="utf-8"), 1):
        if m := re.match(r"^## `rtprov\.([a-z]+)`", line):
            kind = m.group(1)
            doc[kind] = [None, {}, set(), set()]
        elif line.startswith("## "):
            kind = None
        elif kind and (m := re.match(r"^schema_version: (\d+)\s*$", line)):
            doc[kind][0] = int(m.group(1))
        elif kind and (m := re.match(r"^\| `([^`]+)` \| ([a-z ]+) \|", line)):
            words = m.group(2).strip().split(" or ")
            if not set(words) <= TYPES | {"null"}:
                problems.append(f"{name}:{number}: unknown type '{m.group(2).strip()}'")
            doc[kind][1][m.group(1)] = set(words)
            if "*(no test provokes this)*" in line:
                doc[kind][2].add(m.group(1))
            if "*(booted guest)*" in line:
                doc[kind][3].add(m.group(1))
    for kind, (version, _, _, _) in doc.items():
        if version is None:
            problems.append(f"{name}: section rtprov.{kind} has no 'schema_version: N' line")
    return doc, problems


def main(argv):
    dump = argv[1] == "--dump"
    guest = argv[1] == "--guest" or argv[1].startswith("--guest=")
    prefix = argv[1].partition("=")[2] if guest else ""
    if guest:
        argv = argv[1:]
    doc, problems = ({}, []) if dump else read_doc(argv[1])
    seen = {}
    for name in argv[2:]:
        kind = name.rsplit("/", 1)[-1].split(".")[0]
        value = json.load(open(name, encoding="utf-8"))
        if dump:
            walk(value, "", seen.setdefault(kind, set()), set())
            continue
        if kind not in doc:
            problems.append(f"{name}: docs/json.md has no section for rtprov.{kind}")
            continue
        version, keys, _, _ = doc[kind]
        if value.get("schema") != "rtprov." + kind:
            problems.append(f"{name}: schema is {value.get('schema')!r}, not 'rtprov.{kind}'")
        if value.get("schema_version") != version:
            problems.append(f"{name}: schema_version {value.get('schema_version')!r}, "
                            f"the document says {version}")
        maps = {path for path, types in keys.items() if "map" in types}
        walk(value, "", seen.setdefault(kind, set()), maps)
    if dump:
        for kind, pairs in sorted(seen.items()):
            print(f"## rtprov.{kind}")
            for path, t in sorted(pairs):
                print(f"| `{path}` | {t} |")
        return 0
    for kind, pairs in seen.items():
        _, keys, unprovoked, booted = doc[kind]
        for path, t in sorted(pairs):
            documented = keys.get(path)
            if documented is None:
                problems.append(f"rtprov.{kind}: '{path}' ({t}) is not in docs/json.md")
            elif t not in documented and not (t == "object" and "map" in documented):
                problems.append(f"rtprov.{kind}: '{path}' is {t}, docs/json.md says "
                                f"{' or '.join(sorted(documented))}")
        held = {path for path, _ in pairs}
        must = ({p for p in booted if p.startswith(prefix)} if guest
                else set(keys) - unprovoked - booted)
        for path in sorted(must - held):
            problems.append(f"rtprov.{kind}: docs/json.md documents '{path}', "
                            "which no output held")
    for kind in sorted(set(doc) - set(seen) if not guest else set()):
        problems.append(f"docs/json.md documents rtprov.{kind}, which no output was")
    for p in problems:
        print("json_docs_check: " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
