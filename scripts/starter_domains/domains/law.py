"""Law: US traffic fatalities and drunk driving laws, crime and shall-carry laws, Spanish state crime
statistics; the Debian constitution and social contract, the Debian Policy Manual and licence texts."""

from __future__ import annotations

from typing import Any

from ..domain_file import read_domain
from ..sources import DEBIAN, Debs, rdata, rdocs
from ..spec import Copy


def fatalities() -> Any:
    fat = rdata("AER", "Fatalities")
    fat["jail"] = fat["jail"].astype(str)
    fat["service"] = fat["service"].astype(str)
    return fat


def state_crime() -> Any:
    import statsmodels.api as sm

    crime = sm.datasets.statecrime.load_pandas().data.reset_index()
    crime["half"] = ["A-M" if s < "N" else "N-W" for s in crime.state]
    return crime


DOC_DEBIAN = "usr/share/doc/debian/"


def copies(debs: Debs) -> list[Copy]:
    versions = ["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8"]
    texts = [(f"constitution.{v}.txt.gz", f"debian-constitution-v{v}.txt") for v in versions]
    texts += [
        ("constitution.txt.gz", "debian-constitution-current.txt"),
        ("social-contract.txt.gz", "debian-social-contract-current.txt"),
        ("social-contract.1.0.txt.gz", "debian-social-contract-v1.0.txt"),
    ]
    policy = debs.file("debian-policy", "usr/share/doc/debian-policy/policy.pdf.gz")
    licences = ["GPL-2", "GPL-3", "LGPL-2.1", "Apache-2.0", "MPL-2.0", "Artistic", "BSD", "CC0-1.0"]
    return [
        *rdocs([("AER", "Fatalities", "aer-fatalities"), ("AER", "Guns", "aer-guns")]),
        *(Copy("debian-governance", out, debs.file("doc-debian", DOC_DEBIAN + name)) for name, out in texts),
        Copy("debian-policy", f"debian-policy-manual-{DEBIAN['debian-policy']}.pdf", policy),
        *(
            Copy(
                "debian-common-licenses",
                f"licence-{name}.txt",
                debs.file("base-files", f"usr/share/common-licenses/{name}"),
            )
            for name in licences
        ),
    ]


DOMAIN = read_domain("law", copies, fatalities, state_crime)
