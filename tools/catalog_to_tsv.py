"""Regenerate ``src/genlab/papers_catalog.tsv`` from the seed catalogue (``shared/papers/catalog.md``).

    python tools/catalog_to_tsv.py ../shared/papers/catalog.md > src/genlab/papers_catalog.tsv

Keeps, per row: number, name, family, tier (T1/T2/T3) and cluster (C1..C9, or "-").
"""

import re
import sys


def main(path: str) -> None:
    text = open(path, encoding="utf-8").read()
    cluster_of: dict[int, str] = {}
    for m in re.finditer(r"### (C\d)\..*?\*\*Rows:\*\* ([\d, ]+)", text, re.S):
        for n in m.group(2).replace(" ", "").strip(",").split(","):
            cluster_of[int(n)] = m.group(1)
    print("number\tname\tfamily\ttier\tcluster")
    for line in text.splitlines():
        m = re.match(r"\| (\d+) \| (.*?) \| (.*?) \|.*\| (T\d)[^|]*\|\s*$", line)
        if m:
            n = int(m.group(1))
            print(f"{n}\t{m.group(2)}\t{m.group(3)}\t{m.group(4)}\t{cluster_of.get(n, '-')}")


if __name__ == "__main__":
    main(sys.argv[1])
