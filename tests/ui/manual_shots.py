"""Screenshots of the manual (docs/manual/img/): rendered by the tests from the bundled
examples, shrunk to small 256-colour PNGs, and written only when the picture changed by more
than a flicker (a scroll bar shown a moment later): a test run leaves the working tree clean
when nothing changed, and the pictures follow every real change."""
from pathlib import Path

import numpy as np

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from gpumodeler.ui.screenshot import save_png

IMG = Path(__file__).resolve().parents[2] / "docs" / "manual" / "img"
SCREENS = IMG / "screens"    # every tab of every example at both screen sizes
SCREENS_PAGE = IMG.parent / "screens.md"


def small(image: QImage, width: int) -> QImage:
    """``image`` scaled to ``width`` pixels across, in 256 colours without dithering (a
    fifth of the bytes, the same picture to the eye)."""
    scaled = image.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)
    return scaled.convertToFormat(QImage.Format.Format_Indexed8,
                                  Qt.ImageConversionFlag.ThresholdDither | Qt.ImageConversionFlag.AvoidDither)


#: the share of pixels that may differ before a picture counts as changed
FLICKER = 0.001


def _pixels(image: QImage) -> np.ndarray:
    rgb = image.convertToFormat(QImage.Format.Format_RGB32)
    return np.frombuffer(rgb.constBits(), np.uint32, rgb.sizeInBytes() // 4).copy()


def changed_share(old: QImage, new: QImage) -> float:
    """The share of pixels that differ (1 when the sizes differ)."""
    if old.size() != new.size():
        return 1.0
    return float(np.mean(_pixels(old) != _pixels(new)))


def keep(image: QImage, path: Path) -> None:
    """Write ``image`` to ``path`` unless the file already holds the same picture, but for
    a :data:`FLICKER`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    old = QImage(str(path)) if path.is_file() else None
    if old is None or old.isNull() or changed_share(old, image) > FLICKER:
        save_png(image, str(path))


def screen_name(example: str, size: tuple[int, int], tab: str) -> str:
    return f"{example}-{size[0]}x{size[1]}-{tab.lower()}.png"


def stable_grab(window, tries: int = 10) -> QImage:
    """The window's picture once it stops changing (a layout settling after a label grew, a
    chart placing its names again): two grabs 100 ms apart that agree, or the last one."""
    from gpumodeler.ui.screenshot import settle
    image = window.grab().toImage()
    for _ in range(tries):
        settle(100)
        again = window.grab().toImage()
        if again == image:
            return again
        image = again
    return image


REPORT = IMG / "report"    # the HTML report of every example: its first screenful and its summary
REPORT_WIDTH = 896         # the report pictures kept, scaled from a 1280-pixel-wide window


def report_names(example: str) -> tuple[str, str]:
    """The pictures of ``example``'s report: the first screenful at 1280×720, the summary."""
    return f"{example}-first.png", f"{example}-summary.png"
