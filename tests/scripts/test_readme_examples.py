"""scripts/readme-examples.py: a stale example fails the check, --update makes it current."""
import os
import subprocess
import sys

ROOT = os.environ.get("CREST_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "readme-examples.py")
CREST = os.environ["CREST_BIN"]


def check(path, *extra):
    return subprocess.run([sys.executable, SCRIPT, CREST, *extra, str(path)],
                          capture_output=True, text=True, check=False)


def written(tmp_path, text):
    """A Markdown file holding `text`, and the check of it."""
    doc = tmp_path / "doc.md"
    doc.write_text(text)
    return doc, check(doc)


def crest_out(*args):
    return subprocess.run([CREST, *args], capture_output=True, text=True, check=True).stdout


def test_a_stale_example_fails_and_update_rewrites_it(tmp_path):
    doc, stale = written(
        tmp_path, "Intro\n\n```\n$ crest gpus --csv\nname,arch\nV100,Volta\n```\n\nafter\n")
    assert stale.returncode == 1, stale.stdout
    assert "1 example block(s) stale" in stale.stdout
    assert check(doc, "--update").returncode == 0
    text = doc.read_text()
    assert text.startswith("Intro\n\n```\n$ crest gpus --csv\n")
    assert text.endswith("```\n\nafter\n")
    assert crest_out("gpus", "--csv").rstrip("\n") in text
    assert check(doc).returncode == 0


def test_an_output_cut_with_an_ellipsis_is_compared_up_to_its_paragraph(tmp_path):
    first = crest_out("gpus").split("\n\n")[0]
    _, same = written(tmp_path, f"```\n$ crest gpus\n{first}\n…\n```\n")
    assert same.returncode == 0, same.stdout
    _, other = written(tmp_path, f"```\n$ crest gpus\n{first.replace('Volta', 'Volto')}\n…\n```\n")
    assert other.returncode == 1


def test_blocks_with_a_language_are_not_examples(tmp_path):
    _, result = written(tmp_path, "```sh\n$ crest gpus\nnot its output\n```\n")
    assert result.returncode == 0, result.stdout
    assert "0 example block(s) stale" in result.stdout
