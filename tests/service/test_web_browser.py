"""The web interface as a person uses it, in a real headless Chromium (Debian's
`chromium` + `chromium-driver`, driven by Selenium) against `xcplab serve` started as a
subprocess with the stand-in runner (no emulation).

Screenshots of every page land in build-web/screenshots/ (git-ignored, or
$XCPLAB_WEB_SCREENSHOTS); the folder is printed at the end of the module.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_proc import Server, cli
from svc_helpers import spec_text

from xcplab_contract.naming import run_tag

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
try:
    import selenium  # noqa: F401 - only whether it is installed
    HAVE_SELENIUM = True
except ImportError:
    HAVE_SELENIUM = False

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None or DRIVER is None,
                       reason="needs Debian's chromium and chromium-driver (`make deps`)"),
    pytest.mark.skipif(not HAVE_SELENIUM, reason="needs selenium (the dev extras, `make deps`)"),
]

ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("XCPLAB_WEB_SCREENSHOTS", ROOT / "build-web" / "screenshots"))
WAIT_S = 30.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    srv = Server(tmp_path_factory.mktemp("web") / "data", stand_in=True)
    tokens = {u: cli("user", "add", u, env=srv.env) for u in ("alice", "bob")}
    srv.start()
    try:
        yield srv, tokens
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def browser(request: pytest.FixtureRequest, downloads: Path) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service as DriverService

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,1800", "--no-first-run", "--disable-extensions"):
        opts.add_argument(arg)
    opts.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                           "download.prompt_for_download": False})
    driver = webdriver.Chrome(service=DriverService(executable_path=str(DRIVER)), options=opts)
    driver.implicitly_wait(0)
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        yield driver
    finally:
        driver.quit()
        capture = request.config.pluginmanager.getplugin("capturemanager")
        with capture.global_and_fixture_disabled():
            print(f"\nweb screenshots: {SHOTS}")


def shot(driver: Any, name: str) -> None:
    driver.save_screenshot(str(SHOTS / f"{name}.png"))


def shot_whole_page(driver: Any, name: str) -> None:
    """The page from top to bottom (the window grown to the page's height for it)."""
    size = driver.get_window_size()
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(size["width"], min(int(height) + 150, 6000))
    try:
        shot(driver, name)
    finally:
        driver.set_window_size(size["width"], size["height"])


def wait_for(driver: Any, css: str, timeout_s: float = WAIT_S, text: str | None = None) -> Any:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    cond = (ec.text_to_be_present_in_element((By.CSS_SELECTOR, css), text) if text
            else ec.presence_of_element_located((By.CSS_SELECTOR, css)))
    WebDriverWait(driver, timeout_s).until(cond)
    return driver.find_element(By.CSS_SELECTOR, css)


def fill(driver: Any, css: str, value: str) -> None:
    from selenium.webdriver.common.by import By

    el = driver.find_element(By.CSS_SELECTOR, css)
    el.clear()
    el.send_keys(value)


def click(driver: Any, css: str) -> None:
    from selenium.webdriver.common.by import By

    driver.find_element(By.CSS_SELECTOR, css).click()


def base(server: tuple[Server, dict[str, str]]) -> str:
    return f"http://127.0.0.1:{server[0].port}"


def log_in(driver: Any, server: tuple[Server, dict[str, str]], user: str) -> None:
    driver.delete_all_cookies()
    driver.get(base(server) + "/ui/")
    wait_for(driver, "#token")
    assert "/ui/login" in driver.current_url
    fill(driver, "#token", server[1][user])
    click(driver, "#login")
    wait_for(driver, "#whoami", text=user)


def test_login_page_then_empty_history(server, browser) -> None:
    browser.delete_all_cookies()
    browser.get(base(server) + "/ui/")
    wait_for(browser, "#token")
    shot(browser, "01-login")
    fill(browser, "#token", "xcp_wrong.token")
    click(browser, "#login")
    assert "invalid or revoked token" in wait_for(browser, "#login-error").text
    log_in(browser, server, "alice")
    assert "No runs yet" in wait_for(browser, "#no-runs").text
    shot(browser, "02-history-empty")


def test_broken_spec_shows_its_error_at_its_line(server, browser) -> None:
    log_in(browser, server, "alice")
    click(browser, "#nav-submit")
    wait_for(browser, "#spec")
    bad = spec_text("broken").replace("capacity: 10Mbps", "capacity: fast", 1)
    line = next(i for i, t in enumerate(bad.splitlines(), 1) if "fast" in t)
    fill(browser, "#spec", bad)
    # checked as you type, before any submit
    assert f"submitted.yaml:{line}: links[0].capacity" in wait_for(
        browser, "#as-you-type li.error").text
    click(browser, "#submit")
    row = wait_for(browser, f"#line-{line}.bad")
    assert re.search(rf"submitted\.yaml:{line}: links\[0\]\.capacity", row.text), row.text
    assert f"submitted.yaml:{line}: links[0].capacity" in wait_for(browser, "#problems").text
    shot(browser, "03-submit-error")


def test_good_spec_runs_to_its_result_and_archive(server, browser, downloads) -> None:
    log_in(browser, server, "alice")
    browser.get(base(server) + "/ui/submit?example=quickstart.yaml")
    assert "quickstart" in wait_for(browser, "#spec").get_attribute("value")
    shot(browser, "04-submit-example")
    fill(browser, "#spec", spec_text("browser-run", duration=6))
    fill(browser, "#overrides", "links[0].delay=2ms")
    click(browser, "#validate")
    assert "valid: browser-run" in wait_for(browser, "#valid").text
    click(browser, "#submit")
    wait_for(browser, "#live")
    run_id = browser.current_url.rstrip("/").rsplit("/", 1)[1]
    wait_for(browser, "#state", text="running")
    # The stand-in writes its metrics at the end; write some now, as a real run's sink
    # does while it runs, and see the live chart draw them.
    metrics = Path(server[0].env["XCPLAB_DATA_DIR"]) / "runs" / run_id / "metrics"
    rows = "".join(f"{t / 10:.1f},f{k},{(k + 1) * 1e6 * t / 10}\n"
                   for t in range(1, 20) for k in (1, 2))
    (metrics / "flow.csv").write_text("t_s,flow,throughput_bps\n" + rows)
    links = "".join(f"{t / 10:.1f},r1->h2,{min(1, t / 10)},{t % 7},{3000 - 300 * t}\n"
                    for t in range(1, 20))
    (metrics / "link.csv").write_text("t_s,link,utilization,queue_pkts,xcp_phi\n" + links)
    (metrics / "event.csv").write_text("t_s,kind,target,detail\n0.5,loss,r1->h2,{}\n")
    wait_for(browser, "#chart-note", text="38 flow samples, 19 link samples, 1 events")
    assert float(wait_for(browser, "#progress").get_attribute("value")) > 0
    shot(browser, "05-live-running")
    # The page follows the SSE stream and turns into the result page by itself.
    wait_for(browser, "#table-flows", timeout_s=WAIT_S)
    assert wait_for(browser, "#state").text == "completed"
    assert "faithful" in wait_for(browser, "#fidelity").text
    assert "links[0].delay=2ms" in browser.page_source
    shot(browser, "06-result")
    click(browser, "#archive")
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        done = list(downloads.glob(f"{run_id}.tar.gz"))
        if done and done[0].stat().st_size > 0:
            break
        time.sleep(0.2)
    else:
        raise AssertionError(f"archive not downloaded: {list(downloads.iterdir())}")
    assert done[0].read_bytes()[:2] == b"\x1f\x8b"
    browser.get(base(server) + "/ui/")
    row = wait_for(browser, f'tr[data-run="{run_id}"]')
    assert "completed" in row.text
    shot(browser, "07-history")


def test_another_users_run_is_not_found(server, browser) -> None:
    srv, tokens = server
    with httpx.Client(base_url=srv.url, headers={"Authorization": f"Bearer {tokens['bob']}"},
                      timeout=30) as c:
        bobs = c.post("/experiments", content=spec_text("bobs-run")).json()["id"]
    log_in(browser, server, "alice")
    browser.get(base(server) + f"/ui/runs/{bobs}")
    assert "not found" in wait_for(browser, "#error-message").text
    assert "Not found" in browser.title or "Not found" in browser.page_source
    assert "10Mbps" not in browser.page_source and "spec-text" not in browser.page_source
    shot(browser, "08-other-users-run")
    browser.get(base(server) + "/ui/")
    wait_for(browser, "#runs")
    assert bobs not in browser.page_source
    click(browser, "#logout")
    wait_for(browser, "#token")
    shot(browser, "09-logged-out")


def test_a_sweep_from_the_form(server, browser) -> None:
    log_in(browser, server, "alice")
    browser.get(base(server) + "/ui/submit")
    fill(browser, "#spec", spec_text("browser-sweep", duration=0.3))
    fill(browser, "#grid", "links[0].delay=1ms,5ms")
    click(browser, "#submit")
    wait_for(browser, "#sweep-runs")
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline and "sweep-table" not in browser.page_source:
        time.sleep(0.5)
        browser.refresh()
    table = wait_for(browser, "#sweep-table")
    assert "links[0].delay" in table.text and "5ms" in table.text
    shot(browser, "10-sweep")
    figure = wait_for(browser, "#sweep-figure")
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline and not browser.execute_script(
            "return arguments[0].complete && arguments[0].naturalWidth", figure):
        time.sleep(0.2)
    assert browser.execute_script("return arguments[0].naturalWidth", figure) > 100
    shot(browser, "11-sweep-figure")


def test_compare_two_runs_from_the_result_page(server, browser) -> None:
    from selenium.webdriver.support.ui import Select

    log_in(browser, server, "alice")
    browser.get(base(server) + "/ui/")
    runs = [r.get_attribute("data-run") for r in
            browser.find_elements("css selector", "tr[data-run]")]
    assert len(runs) >= 2
    browser.get(base(server) + f"/ui/runs/{runs[0]}")
    Select(wait_for(browser, "#compare-with")).select_by_value(runs[1])
    click(browser, "#compare")
    table = wait_for(browser, "#compare-figures")
    assert "duration_s" in table.text and runs[0] in browser.page_source
    shot(browser, "12-compare")


# --- The live XCP controller state of real runs (the orchestrator's runner, netns) ---

# seed 000 Fig. 1(c) in miniature: XCP-i routers r1, r3 at the edges of a DropTail cloud
# (r2), the oracle estimator, behind an iXCP router r0; `{queue}` = droptail everywhere
# gives the run without XCP.
REAL_SPEC = """\
name: {name}
duration: {duration}
metrics_interval: 100ms
defaults:
  link: {{capacity: 40Mbps, delay: 5ms, buffer: 1BDP}}
nodes:
  s: {{role: host}}
  r0: {{role: router, queue: {ixcp_queue}}}
  r1: {{role: router, queue: {xcpi_queue}}}
  r2: {{role: router, queue: droptail}}
  r3: {{role: router, queue: {xcpi_queue}}}
  d: {{role: host}}
links:
  - {{a: s, b: r0}}
  - {{a: r0, b: r1}}
  - {{a: r1, b: r2}}
  - {{id: bottleneck, a: r2, b: r3, capacity: 20Mbps}}
  - {{a: r3, b: d}}
flows:
  - {{id: x1, proto: xcp, src: s, dst: d}}
"""
XCP_QUEUES = {"ixcp_queue": "ixcp", "xcpi_queue": "{kind: xcpi, estimator: oracle}"}
DROPTAIL = {"ixcp_queue": "droptail", "xcpi_queue": "droptail"}
REAL_RUNS: list[str] = []
XCP_CHARTS = ("chart-phi", "chart-h", "chart-pools", "chart-d", "chart-xcpi", "chart-ixcp-y0",
              "chart-ixcp-pools")


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[tuple[Server, dict[str, str]]]:
    srv = Server(tmp_path_factory.mktemp("web-real") / "data", stand_in=False)
    tokens = {"alice": cli("user", "add", "alice", env=srv.env)}
    srv.start()
    try:
        yield srv, tokens
    finally:
        srv.stop()
        netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        for r in REAL_RUNS:  # namespaces and processes of a run the test left behind
            if f"xcplab-{run_tag(r)}-" in netns:
                subprocess.run([sys.executable, "-m", "orchestrator.cli", "clean", r],
                               env=srv.env, capture_output=True, check=False)


def submit_real(server: tuple[Server, dict[str, str]], name: str, duration: str,
                queues: dict[str, str]) -> str:
    srv, tokens = server
    with srv.client(tokens["alice"]) as c:
        r = c.post("/experiments", content=REAL_SPEC.format(name=name, duration=duration,
                                                            **queues))
        assert r.status_code in (200, 201), r.text
    run_id = str(r.json()["id"])
    REAL_RUNS.append(run_id)
    return run_id


def canvas_points(driver: Any, chart: str) -> int:
    return int(driver.execute_script(
        "return Number(document.getElementById(arguments[0]).dataset.points || 0)", chart))


@pytest.mark.root
def test_live_xcp_controller_state_of_a_real_run(real_server, browser) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    run_id = submit_real(real_server, "live-xcp", "4s", XCP_QUEUES)
    log_in(browser, real_server, "alice")
    browser.get(base(real_server) + f"/ui/runs/{run_id}")
    wait_for(browser, "#live")
    # While the run runs: every controller-state chart has drawn samples.
    WebDriverWait(browser, 60).until(
        lambda d: all(canvas_points(d, c) > 0 for c in XCP_CHARTS))
    assert wait_for(browser, "#state").text == "running"
    assert browser.find_element("css selector", "#xcp-state").is_displayed()
    assert browser.find_element("css selector", "#xcpi-state").is_displayed()
    assert browser.find_element("css selector", "#ixcp-state").is_displayed()
    lines = {c: browser.find_element("id", c).get_attribute("data-lines") for c in XCP_CHARTS}
    # one line per busy XCP-i port direction on the flow's path, the pools + and −;
    # XCP-i: r3's estimate of the cloud before it (upstream r1) beside the oracle's truth
    assert "r1->r2" in lines["chart-phi"].split(","), lines
    assert {"r1->r2 +", "r1->r2 −"} <= set(lines["chart-pools"].split(",")), lines
    assert "r1->r2" in lines["chart-d"].split(","), lines
    assert "r0->r1" in lines["chart-phi"].split(","), lines  # the iXCP port: XCP's state too
    assert "r0->r1" in lines["chart-ixcp-y0"].split(","), lines
    assert {"r0->r1 +", "r0->r1 −"} <= set(lines["chart-ixcp-pools"].split(",")), lines
    xcpi = lines["chart-xcpi"].split(",")
    assert any(n.startswith("r3 ← ") and n.endswith(" estimate") for n in xcpi), xcpi
    assert any(n.startswith("r3 ← ") and n.endswith(" truth") for n in xcpi), xcpi
    assert "XCP port directions" in browser.find_element("id", "xcp-note").text
    def grew(before: int) -> Callable[[Any], bool]:
        return lambda d: canvas_points(d, "chart-d") > before

    for _ in range(2):  # the charts keep growing while it runs
        WebDriverWait(browser, 10).until(grew(canvas_points(browser, "chart-d")))
    shot_whole_page(browser, "13-live-xcp-state")
    # Finished: the result page has the static controller-state plots from the CSV.
    wait_for(browser, "#table-flows", timeout_s=60)
    plots = wait_for(browser, "#plots").text
    assert {"xcp.png", "xcpi.png", "ixcp.png"} <= set(plots.split()), plots
    browser.find_element("css selector", 'img[alt="xcp.png"]').location_once_scrolled_into_view  # noqa: B018
    shot(browser, "14-result-xcp-plots")


@pytest.mark.root
def test_no_xcp_state_for_a_droptail_run(real_server, browser) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    run_id = submit_real(real_server, "live-droptail", "3s", DROPTAIL)
    log_in(browser, real_server, "alice")
    browser.get(base(real_server) + f"/ui/runs/{run_id}")
    wait_for(browser, "#live")
    # Link rows (with their xcp_* cells empty) have arrived and been drawn...
    WebDriverWait(browser, 60).until(lambda d: canvas_points(d, "chart-queue") > 0)
    assert wait_for(browser, "#state").text == "running"
    # ...and the XCP section stayed hidden, its charts empty.
    assert not browser.find_element("css selector", "#xcp-state").is_displayed()
    assert all(canvas_points(browser, c) == 0 for c in XCP_CHARTS)
    shot(browser, "15-live-droptail-no-xcp-state")
    # A line keeps a bounded number of points however long the run (app.js MAX_POINTS).
    kept = browser.execute_script("""
        const c = { series: new Map(), scale: 1 };
        for (let i = 0; i < 10000; i++) push(c, "r1->r2", ["queue_pkts", "", false], i, i);
        const pts = c.series.get("r1->r2").pts;
        return [pts.length, pts[0][0], pts[pts.length - 1][0], MAX_POINTS];""")
    assert kept[3] == 4000 and kept[3] // 2 <= kept[0] <= kept[3] and kept[1] == 0, kept
    assert kept[2] >= 9990, kept  # thinned, not cut: the line still reaches the latest time
    wait_for(browser, "#table-flows", timeout_s=60)
    assert not {"xcp.png", "xcpi.png", "ixcp.png"} & set(wait_for(browser, "#plots").text.split())
