// Looks at every page of the built pkgdown site in headless Chromium, with
// the network off: the site is served from 127.0.0.1 by this script, and any
// request for another address is refused and counted as a failure.
//
//   node pkgdown/node/check-site.mjs [--shots DIR] DOCS_DIR
//
// For every page it asserts: no request outside the site, no script error, a
// table of contents with entries wherever the page has one (every article
// has one), and none of the build machine's paths (MCPLITE_SITE_FORBIDDEN,
// one path a line: its R libraries and the checkout) in the page's text
// after its scripts ran, nor in any file of the site; every link within the
// site leads to one of its files. On the home page: the
// sidebar links every guide in vignettes/ (MCPLITE_SITE_GUIDES, one name a
// line), and the Development section of README.md is not shown; no page has
// a "Report a bug" link (the project has no public address yet). Search, typed into the search box of the home
// page and of an article, lists results that lead to pages of the site.
// --shots DIR saves a full-page screenshot of each page there. Prints one
// line per page and ends with "site check: N pages, N failed"; exits 1 on
// any failure. Chromium is /usr/bin/chromium (Debian's package) unless
// MCPLITE_CHROMIUM names another.
import { chromium } from "playwright-core";
import { createServer } from "node:http";
import { readFile, readdir, stat } from "node:fs/promises";
import { join, extname, relative, resolve, sep } from "node:path";

const args = process.argv.slice(2);
let shots = null;
if (args[0] === "--shots") { shots = resolve(args[1]); args.splice(0, 2); }
if (args.length !== 1) {
  console.error("usage: node check-site.mjs [--shots DIR] DOCS_DIR");
  process.exit(2);
}
const docs = resolve(args[0]);
const lines = (v) => (v || "").split("\n").map((s) => s.trim()).filter(Boolean);
const forbidden = lines(process.env.MCPLITE_SITE_FORBIDDEN);
const guides = lines(process.env.MCPLITE_SITE_GUIDES);
if (forbidden.length === 0 || guides.length === 0) {
  console.error("check-site: MCPLITE_SITE_FORBIDDEN and MCPLITE_SITE_GUIDES must be set (tools/site.sh sets them)");
  process.exit(2);
}

async function walk(dir) {
  const out = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...await walk(p));
    else out.push(p);
  }
  return out;
}

const types = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css",
  ".json": "application/json", ".svg": "image/svg+xml", ".png": "image/png",
  ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf", ".eot": "application/vnd.ms-fontobject",
  ".xml": "application/xml", ".yml": "text/plain", ".map": "application/json", ".txt": "text/plain",
};
const server = createServer(async (req, res) => {
  try {
    let path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    let file = resolve(docs, "." + path);
    if (file !== docs && !file.startsWith(docs + sep)) throw new Error("outside");
    if ((await stat(file)).isDirectory()) file = join(file, "index.html");
    const body = await readFile(file);
    res.writeHead(200, { "content-type": types[extname(file)] || "application/octet-stream" });
    res.end(body);
  } catch {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found");
  }
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const origin = `http://127.0.0.1:${server.address().port}`;

const failures = [];
const fail = (page, what) => failures.push(`${page}: ${what}`);

// Every text file of the site: no path of the build machine.
const files = await walk(docs);
for (const f of files) {
  if (![".html", ".json", ".js", ".xml", ".yml", ".txt", ".md"].includes(extname(f))) continue;
  const text = await readFile(f, "utf8");
  for (const p of forbidden) if (text.includes(p)) fail(relative(docs, f), `the file contains the build machine's path ${p}`);
}

const browser = await chromium.launch({
  executablePath: process.env.MCPLITE_CHROMIUM || "/usr/bin/chromium",
  // Belt and braces besides the request filter below: no name resolves, and
  // anything that bypassed the filter would go to a closed local port.
  args: ["--no-sandbox", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=127.0.0.1"],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
let current = "";
const outside = [];
await context.route("**/*", (route) => {
  const url = route.request().url();
  if (url.startsWith(origin + "/") || url.startsWith("data:")) return route.continue();
  outside.push(`${current}: ${url}`);
  return route.abort("internetdisconnected");
});

const pages = files.filter((f) => extname(f) === ".html").map((f) => relative(docs, f).split(sep).join("/")).sort();
const page = await context.newPage();
const errors = [];
page.on("pageerror", (e) => errors.push(String(e.message || e)));
page.on("console", (m) => { if (m.type() === "error" && !/^Failed to load resource/.test(m.text())) errors.push(m.text()); });
page.on("response", (r) => { if (r.status() >= 400) errors.push(`${r.url()} answered HTTP ${r.status()}`); });
// (A load cut short by leaving the page is no failure.)
page.on("requestfailed", (r) => { if (r.url().startsWith(origin + "/") && !/ERR_ABORTED/.test(r.failure() && r.failure().errorText)) errors.push(`${r.url()} failed: ${r.failure() && r.failure().errorText}`); });

async function open(path) {
  current = path;
  errors.length = 0;
  const response = await page.goto(`${origin}/${path}`, { waitUntil: "load" });
  await page.waitForLoadState("networkidle");
  return response;
}

async function checkSearch(path) {
  await open(path);
  const box = page.locator("#search-input");
  if (await box.count() !== 1) { fail(path, "no search box"); return; }
  await box.click();
  // The index loads on focus; then autocomplete asks it for each keystroke.
  await box.pressSequentially("mcp_check", { delay: 30 });
  const suggestion = page.locator(".aa-suggestion");
  try {
    await suggestion.first().waitFor({ state: "visible", timeout: 10000 });
  } catch {
    fail(path, "search for 'mcp_check' showed no results");
    return;
  }
  const texts = await suggestion.allInnerTexts();
  if (texts.some((t) => /No results found/.test(t))) { fail(path, `search found nothing: ${texts.join(" | ")}`); return; }
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), suggestion.first().click()]);
  const landed = page.url();
  const landedOk = landed.startsWith(origin + "/") && !(await page.title()).startsWith("Page not found");
  if (!landedOk) fail(path, `the first search result leads to ${landed}`);
  console.log(`search from ${path}: ${texts.length} results for 'mcp_check', the first leads to ${landed.slice(origin.length + 1)}`);
}

let tocPages = 0;
const linked = new Map(); // link target within the site -> first page linking to it
for (const path of pages) {
  const before = failures.length;
  const response = await open(path);
  if (!response || (response.status() !== 200)) fail(path, `HTTP ${response && response.status()}`);
  for (const e of errors) fail(path, `script error: ${e}`);
  const info = await page.evaluate(async () => {
    const toc = document.querySelector("#toc");
    const links = toc ? [...toc.querySelectorAll("a.nav-link")] : [];
    return {
      text: document.body.innerText,
      html: document.documentElement.outerHTML,
      hasToc: !!toc,
      tocLinks: links.map((a) => a.getAttribute("href")),
      tocTargetsMissing: links.map((a) => a.getAttribute("href")).filter((h) => !h.startsWith("#") || !document.getElementById(decodeURIComponent(h.slice(1)))),
      links: [...document.querySelectorAll("a[href]")].map((a) => a.href),
      guides: [...document.querySelectorAll("aside .guides a")].map((a) => a.getAttribute("href")),
      headings: [...document.querySelectorAll("main h1, main h2, main h3")].map((h) => h.textContent.trim()),
      bugLinks: [...document.querySelectorAll("a")].filter((a) => /report a bug/i.test(a.textContent)).map((a) => a.href),
      // The icon font (the copy buttons' icon): the style sheet gives it,
      // and its file loads.
      fontAwesome: await (async () => {
        const i = document.createElement("i");
        i.className = "fa fa-copy";
        document.body.appendChild(i);
        const family = getComputedStyle(i, "::before").fontFamily;
        let loaded;
        try {
          loaded = (await document.fonts.load(`900 16px ${family}`)).length > 0 ? family : `no font file for ${family}`;
        } catch (e) {
          loaded = `the font file for ${family} did not load (${e.name})`;
        }
        i.remove();
        return loaded;
      })(),
    };
  });
  for (const l of info.links) {
    if (!l.startsWith(origin + "/")) continue;
    const target = l.replace(/[?#].*$/, "");
    if (!linked.has(target)) linked.set(target, path);
  }
  for (const p of forbidden) if (info.text.includes(p) || info.html.includes(p)) fail(path, `the page shows the build machine's path ${p}`);
  if (info.hasToc) {
    if (info.tocLinks.length === 0) fail(path, "the table of contents is empty");
    else tocPages++;
    for (const h of info.tocTargetsMissing) fail(path, `table of contents entry ${h} leads nowhere on the page`);
  } else if (path.startsWith("articles/") && path !== "articles/index.html") {
    fail(path, "the article has no table of contents");
  }
  if (!/^"?Font Awesome/.test(info.fontAwesome)) fail(path, `the icon font is not loaded (${info.fontAwesome})`);
  if (path === "index.html") {
    const want = guides.map((g) => `articles/${g}.html`).sort();
    const got = [...info.guides].sort();
    if (JSON.stringify(want) !== JSON.stringify(got)) fail(path, `the sidebar lists the guides ${JSON.stringify(got)}, not ${JSON.stringify(want)}`);
    else console.log(`home sidebar: ${got.length} guides, ${got.join(", ")}`);
    if (info.headings.some((h) => /^Development$/.test(h))) fail(path, "the home page shows the Development section");
  }
  for (const b of info.bugLinks) fail(path, `a bug report link to ${b}`);
  if (shots) await page.screenshot({ path: join(shots, path.replace(/\//g, "_").replace(/\.html$/, ".png")), fullPage: true });
  console.log(`${failures.length === before ? "ok  " : "FAIL"} ${path}${info.hasToc ? ` (table of contents: ${info.tocLinks.length} entries)` : ""}`);
}
if (tocPages === 0) fail("site", "no page has a table of contents with entries");

// Every link within the site leads to a file of the site.
for (const [target, from] of linked) {
  const status = (await fetch(target)).status;
  if (status !== 200) fail(from, `links to ${target.slice(origin.length + 1)}, which is not in the site (HTTP ${status})`);
}
console.log(`links within the site: ${linked.size} targets checked`);

await checkSearch("index.html");
await checkSearch("articles/mcplite.html");

for (const o of outside) fail(o.split(": ")[0], `requested ${o.slice(o.indexOf(": ") + 2)} (outside the site)`);

await browser.close();
server.close();
for (const f of failures) console.log(`FAIL ${f}`);
console.log(`site check: ${pages.length} pages, ${failures.length} failed`);
process.exit(failures.length ? 1 : 0);
