"""Trains the handwritten digit classifier: the image example model, proving the ONNX model
component serves a picture model from its manifest alone.

Data: scikit-learn's bundled digits (sklearn.datasets.load_digits: 1,797 images of 8x8 ink
counts 0..16, the test part of UCI's Optical Recognition of Handwritten Digits; Alpaydin and
Kaynak 1998). Each is written as the 8x8 grayscale PNG a user would send (dark ink on white:
grey = round(255 - v * 255 / 16)) under target/model-data/digits, and the model learns from
what `media-features` (crates/media, the serving code) makes of those files, not from the
arrays: training and serving compute the same numbers. A stratified fifth is held out.

Writes, beside this script: model.onnx, training_features.f32 (the training rows as
media-features wrote them, for the applicability domain), REPORT.md and model.toml.

    python3 -m pip install -r models/requirements.txt
    python3 models/digits/train.py
"""

import base64
import io
import pathlib
import sys

import numpy as np
import onnxruntime
from PIL import Image
from skl2onnx import to_onnx
from sklearn.datasets import load_digits
from sklearn.metrics import confusion_matrix
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from common import REPO, media_features, write_manifest  # noqa: E402
from digits_manifest import manifest  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
DATA = REPO / "target" / "model-data" / "digits"
SEED = 7
LABELS = [str(d) for d in range(10)]
# The held-out distance to the nearest training row below which 99% of held-out images fall:
# farther than this, an image is unlike anything the model saw.
DOMAIN_PERCENTILE = 99


def input_table(n_train):
    """`[input]`: how a picture becomes the 64 values the graph takes (scikit-learn's order,
    row by row, ink high on a 0..16 scale)."""
    return {
        "type": "image",
        "image": {
            "color": "grayscale",
            "width": 8,
            "height": 8,
            "fit": "pad",
            "background": 255,
            "invert": True,
            "scale": 16.0,
            "layout": "nchw",
            "training_data": {
                "what": "handwritten digits 0-9, one centred digit per image, dark ink on white",
                "source": "scikit-learn's load_digits (UCI Optical Recognition of Handwritten "
                          "Digits, test part: 13 writers)",
                "count": n_train,
                "width": 8,
                "height": 8,
                "color": "grayscale",
                "levels": 17,
                "note": "each pixel is a count of inked points of a 4x4 block of a 32x32 "
                        "bitmap; each image was also learnt enlarged to 32x32 as serving reads "
                        "it; other pictures are shrunk to 8x8",
            },
        },
    }


def write_png(path, counts):
    """An 8x8 ink-count image (0..16) as the grayscale PNG a user would send."""
    grey = np.round(255 - counts.reshape(8, 8) * 255 / 16).astype(np.uint8)
    Image.fromarray(grey, "L").save(path, format="PNG", optimize=True)


def enlarged(png, size, fmt, quality=90):
    """The digit of an 8x8 PNG drawn at size x size (smoothly enlarged) as a PNG or JPEG file's
    bytes: a larger picture, which serving shrinks back to 8x8 (and blurs on the way)."""
    image = Image.open(png).convert("L").resize((size, size), Image.Resampling.BILINEAR)
    out = io.BytesIO()
    image.save(out, format=fmt, **({"quality": quality} if fmt == "JPEG" else {"optimize": True}))
    return out.getvalue()


def write_enlarged(paths, directory, size, fmt):
    """Every picture of `paths` enlarged into `directory`; returns the new files' paths."""
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for path in paths:
        target = directory / f"{path.stem}.{fmt.lower()}"
        target.write_bytes(enlarged(path, size, fmt))
        out.append(target)
    return out


def nearest_distance(rows, train):
    """Euclidean distance of each row to its nearest training row, from the differences
    themselves (exactly 0 for a training row, as serving computes it)."""
    b = train.astype(np.float64)
    return np.array([np.sqrt(((b - r) ** 2).sum(1).min()) for r in rows.astype(np.float64)])


def main():
    digits = load_digits()
    y = np.array([LABELS[t] for t in digits.target])
    DATA.mkdir(parents=True, exist_ok=True)
    paths = [DATA / f"{i:04d}.png" for i in range(len(y))]
    for path, counts in zip(paths, digits.data):
        write_png(path, counts)
    train_idx, test_idx = train_test_split(np.arange(len(y)), test_size=0.2, stratify=y,
                                           random_state=SEED)
    table = input_table(len(train_idx))
    X = media_features(table, paths)
    assert X.shape == (len(y), 64), f"media-features answered rows of {X.shape[1]} values"
    # The PNGs carry the counts at 8-bit precision: what serving reads is within rounding of
    # scikit-learn's arrays.
    assert np.abs(X - digits.data).max() < 0.05, "the PNGs do not hold the digits' counts"
    # Serving shrinks a larger picture with a smoothing filter, which blurs it beyond the
    # training images' 4x4-block counts: each training digit is also learnt as serving reads
    # it enlarged to 32x32, so a picture larger than 8x8 is not a stranger.
    large = media_features(table, write_enlarged([paths[i] for i in train_idx],
                                                 DATA / "enlarged-32", 32, "PNG"))
    X_train = np.vstack([X[train_idx], large])
    y_train = np.concatenate([y[train_idx], y[train_idx]])
    X_test, y_test = X[test_idx], y[test_idx]
    # The held-out digits enlarged to 64x64 JPEGs: accuracy on larger, lossy pictures.
    X_test_large = media_features(table, write_enlarged([paths[i] for i in test_idx],
                                                        DATA / "held-out-64", 64, "JPEG"))

    model = MLPClassifier(hidden_layer_sizes=(64,), alpha=1e-3, max_iter=2000,
                          random_state=SEED).fit(X_train, y_train)
    (HERE / "model.onnx").write_bytes(to_onnx(model, X_train[:1]).SerializeToString())
    # Measured on what is served: the exported graph, run by onnxruntime.
    session = onnxruntime.InferenceSession(str(HERE / "model.onnx"))
    name = session.get_inputs()[0].name
    predicted = session.run(None, {name: X_test})[0]
    accuracy = float(np.mean(predicted == y_test))
    confusion = confusion_matrix(y_test, predicted, labels=LABELS)
    accuracy_large = float(np.mean(session.run(None, {name: X_test_large})[0] == y_test))

    X_train.astype("<f4").tofile(HERE / "training_features.f32")
    held_out = nearest_distance(X_test, X_train)
    held_out_large = nearest_distance(X_test_large, X_train)
    max_distance = round(float(np.percentile(held_out, DOMAIN_PERCENTILE)), 3)

    examples = test_examples(paths, train_idx, test_idx, y, X_train, max_distance, session, table)
    facts = {"accuracy": accuracy, "accuracy_large": accuracy_large,
             "n_train": len(train_idx), "n_test": len(test_idx),
             "max_distance": max_distance, "held_out_distance": held_out,
             "held_out_large_distance": held_out_large, "rows": len(X_train),
             "onnx_bytes": (HERE / "model.onnx").stat().st_size, "model": model}
    write_report(facts, confusion, examples)
    write_manifest(HERE / "model.toml", manifest(table, facts, examples), HEADER)


def test_examples(paths, train_idx, test_idx, y, X_train, max_distance, session, table):
    """Three held-out digits (two small PNGs, one enlarged JPEG) and one training image, each
    read right with a probability above 0.5 through media-features and the exported graph.
    The first is also read right enlarged to 48x48 (nearest neighbour) as PNG and JPEG: the
    e2e tests send it in other formats and sizes. Held-out digits are taken in order until
    one qualifies (the self-test wants right answers; REPORT.md gives the accuracy on all)."""
    scratch = DATA / "examples"
    scratch.mkdir(exist_ok=True)

    def confident(files, digit):
        out = session.run(None, {session.get_inputs()[0].name: media_features(table, files)})
        return all(label == digit and p[digit] > 0.5 for label, p in zip(*out))

    def first(digit, files_of):
        for i in (i for i in test_idx if y[i] == digit):
            if confident(files_of(i), digit):
                return i
        raise SystemExit(f"no held-out {digit} is read right in every form wanted")

    def large(i, size, fmt, resample):
        image = Image.open(paths[i]).convert("L").resize((size, size), resample)
        path = scratch / f"{i:04d}-{size}.{fmt.lower()}"
        image.save(path, format=fmt, **({"quality": 90} if fmt == "JPEG" else {}))
        return path

    nearest = Image.Resampling.NEAREST
    three = first("3", lambda i: [paths[i], large(i, 48, "PNG", nearest),
                                  large(i, 48, "JPEG", nearest)])
    seven = first("7", lambda i: [paths[i]])
    five = first("5", lambda i: [large(i, 64, "JPEG", Image.Resampling.BILINEAR)])
    trained = next(i for i in train_idx if y[i] == "8" and confident([paths[i]], "8"))
    chosen = [
        (paths[three], "held-out 3 (PNG)",
         f"image {three} of load_digits, never seen in training: an 8x8 PNG"),
        (paths[seven], "held-out 7 (PNG)",
         f"image {seven} of load_digits, never seen in training: an 8x8 PNG"),
        (scratch / f"{five:04d}-64.jpeg", "held-out 5, drawn large (JPEG)",
         f"image {five} of load_digits, never seen in training, enlarged to 64x64 and "
         "saved as a JPEG: serving shrinks it back to 8x8"),
        (paths[trained], "training image 8 (PNG)",
         f"image {trained} of load_digits, a training image: its nearest training image is "
         "itself, at distance 0"),
    ]
    distances = nearest_distance(media_features(table, [p for p, _, _ in chosen]), X_train)
    examples = []
    for (path, name, description), want, distance in zip(chosen, "3758", distances):
        examples.append({"name": name, "description": description, "category": want,
                         "image": base64.b64encode(path.read_bytes()).decode("ascii"),
                         "distance": float(distance), "in_domain": bool(distance <= max_distance)})
    assert examples[-1]["distance"] == 0.0, "the training image is not at distance 0"
    return examples


def write_report(f, confusion, examples):
    within = float(np.mean(f["held_out_distance"] <= f["max_distance"]))
    within_large = float(np.mean(f["held_out_large_distance"] <= f["max_distance"]))
    header = "| true \\ predicted | " + " | ".join(LABELS) + " |"
    rows = [f"| **{label}** | " + " | ".join(str(v) for v in row) + " |"
            for label, row in zip(LABELS, confusion)]
    lines = [
        "# Handwritten digits: training report", "",
        "Written by `train.py`; numbers are measured on the exported graph (`model.onnx`, run by "
        "onnxruntime) fed by `media-features`, the code that serves it.", "",
        "## Data", "",
        "scikit-learn's bundled digits (`load_digits`): 1,797 images of 8x8 pixels, each pixel "
        "the number of inked points (0..16) in a 4x4 block of a 32x32 scan, the test part of "
        "UCI's Optical Recognition of Handwritten Digits (13 writers). Each image is written as "
        "an 8x8 grayscale PNG, dark ink on white, and the model learns from what the serving "
        "code reads from those files.", "",
        f"Split: stratified by digit, seed {SEED}: {f['n_train']} training images, "
        f"{f['n_test']} held out. The held-out images are new images, not new writers: the same "
        "13 people wrote both parts, so accuracy on other people's handwriting will be lower.",
        "", "Serving shrinks a larger picture to 8x8 with a smoothing (triangle) filter, which "
        "blurs it more than the data's 4x4-block counts. So each training image is learnt twice: "
        "as its 8x8 PNG and as serving reads it enlarged (bilinear) to a 32x32 PNG "
        f"({f['rows']} training rows in all, `training_features.f32`).",
        "", "## Model", "",
        f"scikit-learn `MLPClassifier`, one hidden layer of {f['model'].hidden_layer_sizes[0]} "
        f"ReLU units, alpha {f['model'].alpha}, seed {SEED}, exported with skl2onnx's default "
        f"options (graph input `[N, 64]` float; `model.onnx`: {f['onnx_bytes']} bytes).", "",
        "## Held-out accuracy", "",
        f"**{f['accuracy']:.4f}** ({round(f['accuracy'] * f['n_test'])} of {f['n_test']} "
        "images of 8x8, as the data set has them).", "",
        f"The same held-out digits enlarged (bilinear) to 64x64 and saved as JPEG (quality 90), "
        f"which serving shrinks back: **{f['accuracy_large']:.4f}**.", "",
        header, "|" + "---|" * 11, *rows, "",
        "## Applicability domain", "",
        "Each answer carries the Euclidean distance (in the graph's 64 input values, ink 0..16) "
        "from the image to its nearest training image. `max_distance` "
        f"= **{f['max_distance']}** is the {DOMAIN_PERCENTILE}th percentile of that distance "
        f"over the held-out 8x8 images ({within:.1%} of them are within it; {within_large:.1%} "
        "of their enlarged JPEGs); farther, the answer is flagged outside the domain: the "
        "picture is unlike every training digit. The training rows include the enlarged "
        "copies, so the distance is to the nearest of both.", "",
        "## Test examples", "",
        "| example | true | nearest training distance | in domain |", "|---|---|---|---|",
        *[f"| {e['name']} | {e['category']} | {e['distance']:.3f} | {e['in_domain']} |"
          for e in examples],
        "", "## What the model cannot do", "",
        "- Every picture is shrunk to 8x8 pixels (padded to a square with white first): a "
        "photo or a large scan keeps only a blur of its shape, and fine strokes vanish.",
        "- One centred digit per image, filling most of it; several digits, a digit in a "
        "corner, or a digit with a lot of margin are outside what it learnt.",
        "- Dark ink on light paper; light ink on a dark background (a blackboard) reads as "
        "its negative.",
        "- It always answers one of 0-9, whatever the picture: a letter or a face gets a digit "
        "too (check `in_domain` and the probabilities).",
        "- 13 writers of the 1990s: other handwriting styles are untested.",
    ]
    (HERE / "REPORT.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


HEADER = """Manifest of the handwritten digit classifier, read by the ONNX model component.
Written by train.py: edit the text there (or in digits_manifest.py), not here, and retrain."""


if __name__ == "__main__":
    main()
