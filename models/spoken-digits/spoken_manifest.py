"""The spoken digit model's manifest (model.toml) as train.py writes it: what the model says
about itself on /info, /acceptable_ranges and /test_examples, kept apart from the training code.
Every text that describes the model says it learnt synthetic speech. The sections it shares
with the digits model are built by common.py; this holds the prose that is its own."""

from common import digit_classifier_manifest

CITATION = ("eSpeak NG text-to-speech synthesizer (https://github.com/espeak-ng/espeak-ng), "
            "used to synthesise the training speech")


def manifest(table, f, examples):
    return digit_classifier_manifest({
        "name": "spoken-digits",
        "description": "Spoken English digit (zero to nine) in a short WAV, FLAC or Ogg "
                       "recording, from a 1-second log-mel spectrogram and a support vector "
                       "machine. Trained on synthetic speech only (espeak-ng voices with "
                       "noise): untested on human voices, where accuracy is expected to be "
                       "much worse. The audio example model.",
        "citation": CITATION,
        "bibtex": "@software{spoken_digits_onnx_model,\n  title = {spoken-digits: spoken digit "
                  "classifier trained on synthetic speech, served as an ONNX model},\n  year "
                  "= {2026}\n}",
        "capability": {
            "name": "spoken_digit",
            "description": "Recognises one spoken English digit word in a recording (base64 or "
                           "URL), with the distance to the nearest training sound; learnt from "
                           "synthetic speech.",
        },
        "training": f"Trained on {f['n_train']} synthetic recordings of the words zero to nine "
                    "made with espeak-ng (English accents and voice variants, varied speed and "
                    "pitch, white noise), about 0.3 to 1 s each, each also learnt resampled to "
                    "8 kHz. No human voice was heard in training or testing.",
        "property_name": "spoken digit (class)",
        "error_on": "synthetic voices never heard in training",
        "test_set": {
            "test_set": "espeak-ng voices held out by accent and variant; synthetic, not human, "
                        "speech",
            "human_speech": "untested; expect much worse accuracy",
        },
        "thing": "sound",
        "space": "in the log-mel values",
        "supported_features": [
            "not chemical: one spoken English digit word per recording",
            "WAV (PCM or float), FLAC or Ogg Vorbis, any sample rate, mono or stereo; resampled "
            "to 16 kHz, silence cut, 1 s taken",
        ],
        "limitations": [
            "learnt from synthetic speech (espeak-ng) only: untested on human voices, expect "
            "much worse accuracy on real recordings",
            "one word per recording, about 1 s at most once silence is cut",
            "loud background noise or other speech around the word defeats the silence cutting",
            "English digit words only; it always answers one of 0-9",
        ],
        "usage": [
            "Send data.audio (base64 of the file) or data.audio_url.",
            "Treat it as a demonstration: measure it on your own recordings before relying on "
            "it.",
            "Check in_domain: a sound far from every training sound is flagged.",
        ],
        "notes": [
            "Synthetic speech made with espeak-ng (base64 WAV files); category is the digit "
            "said.",
            "The training file's nearest training row is its own: served, its distance is 0 to "
            "float rounding (the WebAssembly component's FFTs and logarithms round slightly "
            "differently from train.py's native featurizer: about 3e-5).",
        ],
    }, table, f, examples)
