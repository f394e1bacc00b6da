"""A real headless Chromium (Debian's chromium and chromium-driver, driven by Selenium) for the
dashboard's tests (see ``pythonpath`` in pyproject)."""

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


@contextmanager
def chromium(width: int = 1500, height: int = 1000) -> Iterator:
    """A Selenium driver of headless Chromium; quits at the end."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not shutil.which(path)]
    assert not missing, f"{missing} missing: apt-get install chromium chromium-driver (.ci/run does)"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={width},{height}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def wait_until(what: str, check: Callable[[], bool], timeout_s: float, detail: Callable[[], str] | None = None) -> None:
    """Poll ``check`` until it holds; fail naming ``what`` after ``timeout_s``, and saying ``detail()``."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() >= deadline:
            said = f"\n{detail()}" if detail else ""
            raise AssertionError(f"the page did not show {what} within {timeout_s:.0f} s{said}")
        time.sleep(0.5)


def count(driver, selector: str) -> int:
    from selenium.webdriver.common.by import By

    return len(driver.find_elements(By.CSS_SELECTOR, selector))


def images_loaded(driver, selector: str) -> int:
    """How many of the images ``selector`` finds have loaded a picture."""
    script = "return [...document.querySelectorAll(arguments[0])].filter(i => i.complete && i.naturalWidth > 0).length"
    return driver.execute_script(script, selector)


def console_errors(driver) -> list[str]:
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


PHONE = (390, 844)  # the sizes every page is checked at: a phone held upright, and a desk's screen
DESK = (1500, 1000)

_LAYOUT = (Path(__file__).parent / "layout.js").read_text()  # a function body: returns the problems


def layout_problems(driver) -> list[str]:
    """What is wrong with the page's layout in the window it has now (layout.js says what it looks for), in
    words; [] when nothing."""
    return driver.execute_script(_LAYOUT)


def at_size(driver, size: tuple[int, int]) -> None:
    """The page laid out as a screen of ``size`` shows it: a phone's (narrower than 640 px) as a mobile
    browser does, honouring the page's viewport tag and touch, a desk's as a desktop browser does."""
    width, height = size
    metrics = {"width": width, "height": height, "screenWidth": width, "screenHeight": height}
    metrics |= {"deviceScaleFactor": 1, "mobile": width < 640}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": width < 640})


SIZES = {"phone": PHONE, "desk": DESK}
# The pages a signed-in user opens, by name -> path; the sign-in page ("login") is the sixth.
PAGES = {"live": "", "history": "history", "search": "search", "strangers": "strangers", "admin": "admin"}

# Drawn: loaded, a page of the dashboard (not an error's text), the menu shown (signed in), no list
# still "Loading ..." and every picture in view loaded.
_SETTLED = """
const nav = document.querySelector("nav");
const waiting = [...document.querySelectorAll(".empty")].some((e) => /^(Loading|Reading) /.test(e.textContent));
const pictures = [...document.images].filter((i) => i.getBoundingClientRect().top < window.innerHeight);
return document.readyState === "complete" && document.querySelector("header") !== null
  && (!nav || nav.classList.contains("ready")) && !waiting
  && pictures.every((i) => i.complete);
"""


def look_at(driver, url: str, name: str, shots: Path | None = None) -> dict[str, list[str]]:
    """Open ``url`` at each of SIZES, let it settle and say what is wrong with its layout, per size;
    with ``shots``, a screenshot of each there as ``NAME-SIZE.png``."""
    found = {}
    for size_name, size in SIZES.items():
        at_size(driver, size)
        driver.get(url)
        wait_until(f"{name} drawn at {size_name} size", lambda: driver.execute_script(_SETTLED), 30)
        time.sleep(0.3)  # a last layout pass after the lists fill in
        found[size_name] = layout_problems(driver)
        if shots is not None:
            driver.save_screenshot(str(shots / f"{name}-{size_name}.png"))
    return found
