// Lighthouse (from npm, node_modules/) on a list of URLs, one Chromium for all of them.
// Usage: node benchmarks/lighthouse_run.mjs OUT.json URL... ; called by benchmarks/lighthouse.py.
import fs from "node:fs";
import os from "node:os";
import * as chromeLauncher from "chrome-launcher";
import lighthouse from "lighthouse";
import desktopConfig from "lighthouse/core/config/desktop-config.js";

const [out, ...urls] = process.argv.slice(2);
const chrome = await chromeLauncher.launch({
  chromePath: process.env.CHROME_PATH || "/usr/bin/chromium",
  chromeFlags: ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const flags = { port: chrome.port, output: "json", logLevel: "error",
  onlyCategories: ["performance", "accessibility"] };
const audits = ["total-blocking-time", "largest-contentful-paint", "first-contentful-paint",
  "speed-index", "cumulative-layout-shift", "total-byte-weight"];
const rows = [];
try {
  for (const url of urls) {
    for (const [preset, config] of [["mobile", undefined], ["desktop", desktopConfig]]) {
      const { lhr } = await lighthouse(url, flags, config);
      // benchmarkIndex: Lighthouse's measure of this machine's speed at the time (a
      // desktop that Lighthouse's presets assume scores 1000 or more); low under load
      const row = { url, preset, load: os.loadavg().map((x) => Math.round(x * 100) / 100),
        benchmark_index: Math.round(lhr.environment.benchmarkIndex),
        performance: Math.round(lhr.categories.performance.score * 100),
        accessibility: Math.round(lhr.categories.accessibility.score * 100),
        failed_accessibility: Object.values(lhr.audits)
          .filter(a => a.score === 0 && lhr.categories.accessibility.auditRefs
            .some(r => r.id === a.id && r.weight > 0)).map(a => a.id) };
      for (const id of audits) row[id] = Math.round(lhr.audits[id].numericValue);
      if (lhr.runtimeError) row.error = lhr.runtimeError.message;
      rows.push(row);
      console.error(`${preset} ${row.performance} ${row.accessibility} TBT ${row["total-blocking-time"]} ${url}`);
    }
  }
} finally {
  await chrome.kill();
}
fs.writeFileSync(out, JSON.stringify(rows, null, 1));
