# SPDX-License-Identifier: Apache-2.0
"""Loads an rtprov HTML report in a real browser and checks what a person would see.

Usage: report_browser.py PAGE SCREENSHOT   (run with Debian's /usr/bin/python3, which has
python3-selenium; chromium and chromedriver from Debian)

Headless Chromium opens PAGE from a file, as from a USB stick. Checks: every chart (svg)
and every line drawn in it has a non-empty box on the laid-out page; the browser logged
no error; the page asked for nothing over the network or from another file (the only
request is the page itself); the verdict is shown. Saves a screenshot of the whole page
to SCREENSHOT. Prints each check; exits 1 when one fails.
"""
import json
import pathlib
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

page, screenshot = pathlib.Path(sys.argv[1]).resolve(), sys.argv[2]
options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
# As root, without a display; and none of chromium's own connections, which this
# machine's closed network refuses
for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--window-size=1200,900"):
    options.add_argument(flag)
options.add_argument("--user-data-dir=" + tempfile.mkdtemp(prefix="rtprov-chromium-"))
options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
failed = []


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + (f": {detail}" if detail and not ok else ""))
    if not ok:
        failed.append(what)


try:
    driver.get(page.as_uri())
    svgs = driver.find_elements(By.TAG_NAME, "svg")
    check("the page has charts", len(svgs) > 0)
    empty = [i for i, svg in enumerate(svgs) if svg.rect["width"] <= 0 or svg.rect["height"] <= 0]
    check("every chart is laid out with a size", not empty, f"charts {empty}")
    # the boxes of what each chart draws, as the browser computed them
    boxes = driver.execute_script(
        "return Array.from(document.querySelectorAll('svg polyline, svg rect, svg circle'))"
        ".map(e => { const b = e.getBBox(); return [e.tagName, b.width, b.height]; });")
    drawn = [b for b in boxes if b[0] == "polyline"]
    check("the charts draw lines", len(drawn) > 0)
    check("every line has a non-empty box",
          all(w > 0 or h > 0 for _, w, h in drawn), str([b for b in drawn if b[1] <= 0 and b[2] <= 0]))
    verdict = driver.find_elements(By.CLASS_NAME, "verdict")
    check("the verdict is shown", len(verdict) == 1 and verdict[0].is_displayed() and
          verdict[0].text.strip() != "")
    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    check("the browser logged no error", not errors, json.dumps(errors))
    requests = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        # the page's own requests (the browser's start page makes its own before it)
        if (message["method"] == "Network.requestWillBeSent" and
                message["params"].get("documentURL") == page.as_uri()):
            requests.append(message["params"]["request"]["url"])
    others = [url for url in requests if url != page.as_uri()]
    check("the page asked for nothing but itself", not others and requests, str(requests))
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1200, min(max(int(height) + 40, 900), 16000))
    check("a screenshot was taken", driver.save_screenshot(screenshot))
finally:
    driver.quit()
sys.exit(1 if failed else 0)
