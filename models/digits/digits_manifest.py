"""The digits model's manifest (model.toml) as train.py writes it: what the model says about
itself on /info, /acceptable_ranges and /test_examples, kept apart from the training code.
The sections it shares with the spoken digit model are built by common.py; this holds the
prose that is the digits model's own."""

from common import digit_classifier_manifest

CITATION = ("Alpaydin E, Kaynak C. Optical Recognition of Handwritten Digits. UCI Machine "
            "Learning Repository, 1998. doi:10.24432/C50P49")


def manifest(table, f, examples):
    return digit_classifier_manifest({
        "name": "digits",
        "description": "Handwritten digit (0-9) in a PNG, JPEG, GIF, BMP or WebP picture of one "
                       "dark digit on light paper: the picture is shrunk to 8x8 grey levels and "
                       "classified by a small neural network trained on scikit-learn's bundled "
                       "digits; the image example model.",
        "citation": CITATION,
        "bibtex": "@software{digits_onnx_model,\n  title = {digits: handwritten digit "
                  "classifier served as an ONNX model},\n  year = {2026}\n}",
        "capability": {
            "name": "handwritten_digit",
            "description": "Reads one handwritten digit from a picture (base64 or URL), with the "
                           "distance to the nearest training image.",
        },
        "training": f"Trained on {f['n_train']} 8x8 grayscale images of handwritten digits "
                    "(scikit-learn's load_digits, 13 writers); any picture is shrunk to 8x8 "
                    "before it is classified.",
        "property_name": "handwritten digit (class)",
        "error_on": "held-out images",
        "test_set": {
            "test_set": "a stratified fifth of load_digits, never seen in training (same "
                        "writers as training)",
        },
        "thing": "image",
        "space": "64 ink values 0..16",
        "supported_features": [
            "not chemical: one handwritten digit per picture, dark ink on light paper",
            "PNG, JPEG, GIF, BMP or WebP of any size, shrunk to 8x8 (padded to a square with "
            "white)",
        ],
        "limitations": [
            "every picture is shrunk to 8x8 pixels: a photo keeps only a blur of its shape",
            "one centred digit filling most of the picture; several digits or a small digit in "
            "a wide margin are outside what it learnt",
            "light ink on a dark background reads as its negative",
            "it always answers one of 0-9, whatever the picture shows",
            "13 writers of the 1990s: other handwriting is untested",
        ],
        "usage": [
            "Send data.image (base64 of the file) or data.image_url.",
            "Crop the picture to the digit, dark on light, before sending it.",
            "Check in_domain: a picture far from every training digit is flagged.",
        ],
        "notes": [
            "Images of scikit-learn's load_digits written as files (base64); category is the "
            "true digit.",
            "The training image is at distance 0 from the training set: serving reads it "
            "exactly as training did.",
        ],
    }, table, f, examples)
