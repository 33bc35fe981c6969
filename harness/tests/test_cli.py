# SPDX-License-Identifier: GPL-2.0
"""The command line: a short option letter means one thing in every
subcommand (the first long option of each is its name), so that '-k 3'
is a number of boots wherever it is taken."""
import argparse
import collections
import unittest

from harness import cli


def _parser() -> argparse.ArgumentParser:
    return cli.parser()


def letters() -> dict[str, dict[str, list[str]]]:
    """{'-k': {'--boots': ['mutate', 'race']}, ...} over every subcommand."""
    ap = _parser()
    subs = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    out: dict[str, dict[str, list[str]]] = collections.defaultdict(
        lambda: collections.defaultdict(list))
    for name, p in subs.choices.items():
        for a in p._actions:
            longs = [o for o in a.option_strings if o.startswith("--")]
            for o in a.option_strings:
                if len(o) == 2 and o != "-h":
                    out[o][longs[0] if longs else a.dest].append(name)
    return out


class Letters(unittest.TestCase):

    def test_one_meaning_per_letter(self):
        clashes = {k: dict(v) for k, v in letters().items() if len(v) > 1}
        self.assertEqual(clashes, {})

    def test_the_vocabulary(self):
        # The letters the README and docs lean on keep their meaning.
        table = letters()
        for letter, name in (("-o", "--out"), ("-t", "--topology"), ("-K", "--kind"),
                             ("-n", "--name"), ("-j", "--jobs"), ("-k", "--boots"),
                             ("-l", "--logdir"), ("-r", "--ref"), ("-s", "--vcpus")):
            self.assertEqual(list(table[letter]), [name], letter)


if __name__ == "__main__":
    unittest.main()
