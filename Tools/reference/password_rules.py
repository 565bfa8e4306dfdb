"""The Password Rules language of SPEC.md §12.1, from the SPEC alone: parse, canonical text, and
the exact number of accepted passwords of a length (so the vectors fix the generator's entropy).
"""
import re

WHITE = " \t\n\f\r"
UPPER = set(range(0x41, 0x5B))
LOWER = set(range(0x61, 0x7B))
DIGIT = set(range(0x30, 0x3A))
PRINTABLE = set(range(0x20, 0x7F))
SPECIAL = PRINTABLE - UPPER - LOWER - DIGIT
NAMED = {"upper": UPPER, "lower": LOWER, "digit": DIGIT, "special": SPECIAL, "ascii-printable": PRINTABLE, "unicode": PRINTABLE}


class Malformed(Exception):
    pass


def parse(text):
    """The combined rule: (minlength, maxlength, max_consecutive, [required sets], allowed set)."""
    i, n = 0, len(text)

    def skip():
        nonlocal i
        while i < n and text[i] in WHITE:
            i += 1

    def number():
        nonlocal i
        m = re.compile(r"[0-9]+").match(text, i)
        if not m:
            raise Malformed("number")
        i = m.end()
        return min(int(m.group()), 1_000_000)

    def custom():
        nonlocal i
        i += 1
        start, members = i, set()
        while i < n:
            c = text[i]
            i += 1
            if c == "]":
                if i < n and text[i] == "]":
                    members.add(ord("]"))
                    i += 1
                return members
            if not (0x20 <= ord(c) <= 0x7E) or (c == "-" and i - 1 != start):
                continue
            members.add(ord(c))
        raise Malformed("unclosed class")

    def classes():
        nonlocal i
        result = set()
        while True:
            if i < n and text[i] == "[":
                result |= custom()
            else:
                m = re.compile(r"[A-Za-z-]*").match(text, i)
                name = m.group().lower()
                if name not in NAMED:
                    raise Malformed("class")
                i = m.end()
                result |= NAMED[name]
            skip()
            if i < n and text[i] == ",":
                i += 1
                skip()
                continue
            return result

    props = []
    skip()
    while i < n:
        m = re.compile(r"[A-Za-z-]*").match(text, i)
        name = m.group()
        if name not in ("minlength", "maxlength", "max-consecutive", "required", "allowed"):
            raise Malformed("name")
        i = m.end()
        if i >= n or text[i] != ":":
            raise Malformed(":")
        i += 1
        skip()
        if not (i >= n or text[i] == ";"):
            value = number() if name in ("minlength", "maxlength", "max-consecutive") else classes()
            if value != set():
                props.append((name, value))
        skip()
        if i >= n:
            break
        if text[i] != ";":
            raise Malformed(";")
        i += 1
        skip()
    mins = [v for k, v in props if k == "minlength"]
    maxs = [v for k, v in props if k == "maxlength"]
    cons = [v for k, v in props if k == "max-consecutive"]
    required = [v for k, v in props if k == "required"]
    allowed = set().union(*[v for k, v in props if k in ("allowed", "required")])
    minimum = max(mins) if mins and max(mins) > 0 else None
    return minimum, min(maxs) if maxs else None, min(cons) if cons else None, required, allowed or set(PRINTABLE)


def set_text(members):
    if members >= PRINTABLE:
        return "ascii-printable"
    names, rest = [], set(members)
    for name in ("upper", "lower", "digit", "special"):
        if members >= NAMED[name]:
            names.append(name)
            rest -= NAMED[name]
    if rest:
        chars = sorted(c for c in rest if c not in (ord("-"), ord("]")))
        text = ("-" if ord("-") in rest else "") + "".join(map(chr, chars)) + ("]" if ord("]") in rest else "")
        names.append("[" + text + "]")
    return ", ".join(names)


def canonical(rule):
    minimum, maximum, consecutive, required, allowed = rule
    parts = []
    if minimum is not None:
        parts.append(f"minlength: {minimum}")
    if maximum is not None:
        parts.append(f"maxlength: {maximum}")
    if consecutive is not None:
        parts.append(f"max-consecutive: {consecutive}")
    parts += [f"required: {set_text(r)}" for r in required]
    parts.append(f"allowed: {set_text(allowed)}")
    return "; ".join(parts)


def chosen_length(rule):
    minimum, maximum, *_ = rule
    return min(max(20, minimum or 1), maximum if maximum is not None else 256)


def count(rule, length):
    """Accepted passwords of `length` over the generator's alphabet (space only when needed), exactly."""
    _, _, consecutive, required, allowed = rule
    without_space = allowed - {0x20}
    keep = not without_space or any(not (r & without_space) for r in required)
    pool = sorted(allowed if keep else without_space)
    full = (1 << len(required)) - 1
    # state: (mask, last character, run) -> number of ways so far
    ways = {(0, None, 0): 1}
    for _ in range(length):
        following = {}
        for (mask, last, run), w in ways.items():
            for c in pool:
                if consecutive is None:  # runs do not matter: forget the last character
                    c_key, r = None, 0
                else:
                    c_key, r = c, (run + 1 if c == last else 1)
                    if r > consecutive:
                        continue
                m = mask
                for k, s in enumerate(required):
                    if c in s:
                        m |= 1 << k
                key = (m, c_key, r)
                following[key] = following.get(key, 0) + w
        ways = following
    return sum(w for (mask, _, _), w in ways.items() if mask == full)


# (rule, length or None for the chosen one); lengths kept small where the alphabet is large, so
# the exact counts stay quick to compute.
CASES = [
    ("", 8), ("minlength: 3; maxlength: 3; allowed: [ab]", None), ("minlength: 3; maxlength: 3; allowed: [ab]; max-consecutive: 1", None),
    ("minlength: 3; maxlength: 3; required: [a]; allowed: [abc]; max-consecutive: 2", None),
    ("required: upper; required: lower; required: digit; max-consecutive: 2; minlength: 8;", 8),
    ("minlength: 8; maxlength: 20; max-consecutive: 4; required: lower, upper; required: digit; allowed: [%&_?#=];", 10),
    ("minlength: 8; maxlength: 12; required: digit; allowed: lower", None),
    ("minlength: 6; maxlength: 6; required: [-]]; allowed: digit", None),
    ("allowed: [a-c]; minlength: 4; maxlength: 4", None), ("allowed: [ab]]; maxlength: 5", None),
    ("allowed: UPPER, Digit; required: [ ]; maxlength: 6", None), ("required: unicode; maxlength: 4", None),
    ("minlength: 8; minlength: 12; maxlength: 30; maxlength: 14; max-consecutive: 3; max-consecutive: 1; allowed: [xyz]", None),
    ("minlength: ; maxlength: 7; allowed: []; required: digit", None), ("allowed: [aé]; maxlength: 3", None),
    ("  minlength:5 ;maxlength: 5 ;\tallowed:lower,upper  ;  ", None),
    ("foo: 3", None), ("minlength 8", None), ("minlength: eight", None), ("allowed: upper,", None), ("allowed: latin", None),
    ("allowed: [abc", None), ("minlength: 8 maxlength: 9", None), ("; minlength: 8", None), ("Minlength: 8", None),
]


def vectors():
    """`rule`, `canonical` (or `malformed`), `length`, `count` lines, one group per case."""
    lines = []
    for text, length in CASES:
        lines.append(("rule", text.replace("\t", "\\t")))  # a tab is written \t
        try:
            rule = parse(text)
        except Malformed:
            lines.append(("canonical", "malformed"))
            continue
        length = length or chosen_length(rule)
        lines += [("canonical", canonical(rule)), ("length", str(length)), ("count", str(count(rule, length)))]
    return lines


if __name__ == "__main__":
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "CofferTests", "Vectors", "primitives", "password_rules.vector")
    with open(path, "w") as f:
        f.write("# Password Rules (SPEC.md §12.1): rule, canonical text or malformed, length, number of accepted passwords\n")
        f.write("# Generated by Tools/reference/password_rules.py; do not edit. A tab in a rule is written \\t.\n")
        for key, value in vectors():
            f.write(f"{key}: {value}\n")
    print("written", os.path.normpath(path))
