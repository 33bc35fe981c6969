# SPDX-License-Identifier: GPL-2.0
"""sfp submission: each line's cover letter (its own, or the common one
when the series has no prerequisite), the refusal of a line that needs
its own letter, and of a non-empty output directory, before any work."""
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import sfp_data  # noqa: E402
import sfp_series  # noqa: E402
import sfp_submission  # noqa: E402

D = sfp_data.load()


class Cover(unittest.TestCase):
    def test_every_line_has_a_letter(self):
        for line in D.line_names():
            series = sfp_series.load(D.root / "patches" / line)
            letter = sfp_submission.cover_letter(line, series)
            self.assertTrue(letter.is_file(), line)
            if any(p.role == "prereq" for p in series):
                self.assertEqual(letter.name, f"cover-letter-{line}.txt")
            # the letter numbers the patches the series has
            n = len(series)
            self.assertIn(f"atch {n}" if n > 4 else "atch 4", letter.read_text().replace(
                "\n", " "), line)

    def test_prereq_needs_own_letter(self):
        series = [sfp_series.Patch(pathlib.Path("0001-fix.patch"), "prereq")]
        with self.assertRaisesRegex(sfp_submission.SubmissionError,
                                    "write docs/cover-letter-9.9.txt"):
            sfp_submission.cover_letter("9.9", series)

    def test_refusals(self):
        with tempfile.TemporaryDirectory() as d:
            b = pathlib.Path(d)
            p = D.root / "patches" / "6.12"
            with self.assertRaisesRegex(sfp_submission.SubmissionError, "no work tree at"):
                sfp_submission.write("6.12", b, p, None, lambda m: None)
            (b / "tree" / ".git").mkdir(parents=True)
            (b / "tree" / "scripts").mkdir()
            (b / "tree" / "scripts" / "get_maintainer.pl").write_text("")
            (b / "out").mkdir()
            (b / "out" / "mine").write_text("x")
            with self.assertRaisesRegex(sfp_submission.SubmissionError, "is not empty"):
                sfp_submission.write("6.12", b, p, b / "out", lambda m: None)
            self.assertEqual((b / "out" / "mine").read_text(), "x")


if __name__ == "__main__":
    unittest.main()
