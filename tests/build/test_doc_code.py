"""attention_site.checks.doc_code: the executed blocks of the pages, linted with ruff."""

from __future__ import annotations

from pathlib import Path

from attention_site.checks import doc_code

PAGE = """# A page

```python exec="on"
import sys
import os
print(os.sep)
```

```python
import unused  # shown, not run: not linted
```

=== "Tab"

    ```python exec="on" session="s"
    import json
    ```

    ```python exec="on" session="s"
    print(json.dumps({}), f"{1}")
    ```
"""


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "part").mkdir(parents=True)
    (docs / "part" / "page.md").write_text(PAGE, encoding="utf-8")
    return docs


def test_findings_are_reported_at_their_line_of_the_page(tmp_path: Path) -> None:
    found = doc_code.lint(_docs(tmp_path))
    codes = {(f.split(":")[1], f.split(": ", 1)[1].split()[0]) for f in found}
    # the unsorted imports (line 4) and the unused sys (line 4); the session's json is used by
    # its next block, and the block that is only shown is not linted
    assert codes == {("4", "I001"), ("4", "F401")}, found


def test_fix_writes_each_block_back_in_place(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    assert doc_code.fix(docs) == 1
    text = (docs / "part" / "page.md").read_text(encoding="utf-8")
    assert text == PAGE.replace("import sys\nimport os\n", "import os\n\n")
    assert doc_code.lint(docs) == []


def test_a_pytorch_tab_s_code_is_linted_though_not_run(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    code = "    ```python\n    import math\n\n    import torch\n\n    print(torch)\n    ```\n"
    page = f'# P\n\n=== "PyTorch"\n\n{code}\n=== "Other"\n\n{code}'
    (docs / "page.md").write_text(page, encoding="utf-8")
    found = doc_code.lint(docs)
    # the PyTorch tab's unused math (line 6), not the same code shown in the other tab
    assert [f.split(":", 1)[1].split(": ")[1].split()[0] for f in found] == ["F401"], found
    assert found[0].split(":")[1] == "6", found
