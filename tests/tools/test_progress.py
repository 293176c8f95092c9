"""The progress bar: counts, bar, metrics; one redrawn line on terminals, few lines in logs."""
import io

import ptojax as pto


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_yields_every_item_and_shows_count_bar_and_metrics():
    out = io.StringIO()
    bar = pto.tools.progress(range(20), desc="train", file=out)
    seen = []
    for i in bar:
        seen.append(i)
        bar.set(loss=1.0 / (i + 1), step=i)
    assert seen == list(range(20))
    last = out.getvalue().splitlines()[-1]
    assert last.startswith("train [########################] 20/20")
    assert "loss=0.05 step=19" in last and "it/s" in last


def test_logs_get_a_line_per_tenth_and_a_final_line():
    out = io.StringIO()
    list(pto.tools.progress(range(100), file=out))
    lines = out.getvalue().splitlines()
    assert len(lines) == 10 and lines[0].startswith("[##") and " 10/100" in lines[0]
    assert [int(line.split("/")[0].split()[-1]) for line in lines] == list(range(10, 101, 10))
    assert lines[-1].startswith("[" + "#" * 24 + "] 100/100")


def test_terminals_get_one_redrawn_line():
    out = Terminal()
    list(pto.tools.progress(range(50), file=out, min_interval=0.0))
    text = out.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n") and text.count("\r") == 51


def test_unknown_length_shows_the_count():
    out = io.StringIO()
    list(pto.tools.progress((i for i in range(7)), desc="gen", file=out))
    assert out.getvalue().splitlines()[-1].startswith("gen 7 ")
