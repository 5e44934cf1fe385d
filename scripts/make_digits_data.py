"""Convert scikit-learn's bundled 8x8 digits data set into examples/data/digits.npz.

Run once (requires scikit-learn; no network access needed, the data ships
inside the scikit-learn package):

    pip install scikit-learn
    python scripts/make_digits_data.py

The output holds two arrays:
    images  uint8, shape (1797, 8, 8), pixel values 0..16
    labels  uint8, shape (1797,),      digit classes 0..9

Source: UCI ML hand-written digits data set ("Optical Recognition of
Handwritten Digits", E. Alpaydin and C. Kaynak, 1998), licensed CC BY 4.0,
as bundled with scikit-learn (BSD-3-Clause). See examples/data/README.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "examples" / "data" / "digits.npz"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output .npz path")
    args = parser.parse_args()

    from sklearn.datasets import load_digits

    digits = load_digits()
    images = np.asarray(digits.images)
    labels = np.asarray(digits.target)

    assert images.shape == (1797, 8, 8), images.shape
    assert labels.shape == (1797,), labels.shape
    assert images.min() >= 0 and images.max() <= 16
    assert np.array_equal(images, np.round(images)), "pixel values must be integers"
    assert labels.min() == 0 and labels.max() == 9

    images_u8 = images.astype(np.uint8)
    labels_u8 = labels.astype(np.uint8)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, images=images_u8, labels=labels_u8)

    # Round-trip check.
    with np.load(args.out) as f:
        assert np.array_equal(f["images"], images_u8)
        assert np.array_equal(f["labels"], labels_u8)
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes): "
          f"images {images_u8.shape} {images_u8.dtype}, labels {labels_u8.shape} {labels_u8.dtype}")


if __name__ == "__main__":
    main()
