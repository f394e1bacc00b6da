"""A real headless Chromium (Debian's chromium and chromium-driver, driven by Selenium) for the
dashboard's tests (see ``pythonpath`` in pyproject)."""

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

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
