// Where a page's main-thread time goes under Lighthouse's mobile preset (one URL per line out).
// Usage: node benchmarks/lh_profile.mjs [--desktop] URL...
import * as chromeLauncher from "chrome-launcher";
import lighthouse from "lighthouse";
import desktopConfig from "lighthouse/core/config/desktop-config.js";

let args = process.argv.slice(2);
const desktop = args[0] === "--desktop";
if (desktop) args = args.slice(1);
const chrome = await chromeLauncher.launch({
  chromePath: process.env.CHROME_PATH || "/usr/bin/chromium",
  chromeFlags: ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  for (const url of args) {
    const { lhr } = await lighthouse(url, { port: chrome.port, output: "json", logLevel: "error",
      onlyCategories: ["performance"] }, desktop ? desktopConfig : undefined);
    const a = lhr.audits;
    console.log(`\n== ${url} perf ${Math.round(lhr.categories.performance.score * 100)} TBT ${Math.round(a["total-blocking-time"].numericValue)} LCP ${Math.round(a["largest-contentful-paint"].numericValue)} FCP ${Math.round(a["first-contentful-paint"].numericValue)} SI ${Math.round(a["speed-index"].numericValue)} idx ${Math.round(lhr.environment.benchmarkIndex)} DOM ${a["dom-size"].numericValue}`);
    console.log("breakdown:", a["mainthread-work-breakdown"].details.items.map(i => `${i.group} ${Math.round(i.duration)}`).join(", "));
    console.log("bootup:", (a["bootup-time"].details?.items || []).map(i => `${i.url.split("/").slice(-1)[0] || i.url} total ${Math.round(i.total)} script ${Math.round(i.scripting)} parse ${Math.round(i.scriptParseCompile)}`).join(" | "));
    console.log("long tasks:", (a["long-tasks"].details?.items || []).map(i => `${(i.url || "").split("/").slice(-1)[0]}@${Math.round(i.startTime)}:${Math.round(i.duration)}`).join(", "));
    for (const k of ["first-contentful-paint", "largest-contentful-paint", "speed-index", "total-blocking-time", "cumulative-layout-shift", "interactive"]) {
      if (a[k]) process.stdout.write(`${k} score ${a[k].score} `);
    }
    console.log();
  }
} finally {
  await chrome.kill();
}
