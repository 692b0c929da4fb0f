// Drives headless Chromium through poslab's web page (run by web/test.sh, which serves the page).
// Two runs: with WebGPU (SwiftShader's Vulkan under Chromium's WebGPU), where the GPU engine
// computes, and without (WebGL2 only), where the CPU engine does. Each run asserts, through the
// page: the app starts with no console error; the sinusoidal heatmap is drawn (window.poslabState
// says so, and the screenshot's heatmap area has the colours of one); two other views open and
// draw; the status names the engine. Screenshots go to the folder given.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inflateSync } from "node:zlib";

const [url, outDir, browser = "/usr/bin/chromium"] = process.argv.slice(2);
if (!url || !outDir) {
  console.error("usage: node web/test.mjs URL SCREENSHOT_DIR [CHROMIUM]");
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });

const BASE_FLAGS = [
  "--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync",
];
const WEBGPU_FLAGS = [
  "--enable-unsafe-webgpu", "--enable-features=Vulkan", "--use-vulkan=swiftshader",
  "--use-angle=vulkan",
];
const VIEWPORT = { width: 1280, height: 800 };

/** Decodes an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium's screenshots are). */
function decodePng(png) {
  let offset = 8;
  let width = 0, height = 0, channels = 0;
  const data = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString("ascii", offset + 4, offset + 8);
    const body = png.subarray(offset + 8, offset + 8 + length);
    if (type === "IHDR") {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const [depth, colour, , , interlace] = body.subarray(8, 13);
      if (depth !== 8 || interlace !== 0 || (colour !== 2 && colour !== 6)) {
        throw new Error(`unexpected PNG: depth ${depth}, colour type ${colour}, interlace ${interlace}`);
      }
      channels = colour === 6 ? 4 : 3;
    } else if (type === "IDAT") {
      data.push(body);
    }
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const left = x >= channels ? pixels[y * stride + x - channels] : 0;
      const up = y > 0 ? pixels[(y - 1) * stride + x] : 0;
      const corner = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels] : 0;
      let value = line[x];
      if (filter === 1) value += left;
      else if (filter === 2) value += up;
      else if (filter === 3) value += (left + up) >> 1;
      else if (filter === 4) {
        const p = left + up - corner;
        const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - corner)];
        value += pa <= pb && pa <= pc ? left : pb <= pc ? up : corner;
      }
      pixels[y * stride + x] = value & 255;
    }
  }
  return { width, height, channels, pixels };
}

/** Distinct colours in a rectangle of the screenshot (a picture has many; an empty panel few). */
function coloursIn(png, { x0, y0, x1, y1 }) {
  const { width, channels, pixels } = decodePng(png);
  const seen = new Set();
  for (let y = y0; y < y1; y += 2) {
    for (let x = x0; x < x1; x += 2) {
      const i = (y * width + x) * channels;
      seen.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
    }
  }
  return seen.size;
}

// The view's area: right of the side panel, above the status bar.
const CENTRAL = { x0: 420, y0: 160, x1: 1240, y1: 740 };

const failures = [];
function check(condition, message) {
  if (!condition) failures.push(message);
  console.log(`${condition ? "ok  " : "FAIL"} ${message}`);
}

async function waitForState(page, predicate, what, arg = null, timeout = 60000) {
  try {
    await page.waitForFunction(predicate, arg, { timeout, polling: 100 });
  } catch (error) {
    const state = await page.evaluate(() => window.poslabState).catch(() => undefined);
    throw new Error(`${what}: not within ${timeout / 1000} s; window.poslabState = ${JSON.stringify(state)}`);
  }
  return page.evaluate(() => window.poslabState);
}

/** Counts the page's animation frames from now on: a job on the page's thread delays them. */
async function watchFrames(page) {
  await page.evaluate(() => {
    window.poslabFrames = [];
    const tick = (time) => {
      window.poslabFrames.push(time);
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    // The page's thread busy for 50 ms or more at a stretch, as the browser measures it.
    window.poslabLongTasks = [];
    new PerformanceObserver((list) => {
      for (const task of list.getEntries()) window.poslabLongTasks.push([task.startTime, task.duration]);
    }).observe({ type: "longtask" });
  });
}

/** The longest stretch the page's thread was busy since `since` (ms of the page's clock). */
function longestTask(page, since) {
  return page.evaluate((since) => Math.max(0, ...window.poslabLongTasks
    .filter(([start]) => start >= since).map(([, duration]) => duration)), since);
}

/** The gaps between the frames counted since frame `from`, in milliseconds. */
function frameGaps(page, from) {
  return page.evaluate((from) => {
    const frames = window.poslabFrames.slice(Math.max(from - 1, 0));
    return frames.slice(1).map((time, k) => time - frames[k]);
  }, from);
}

/** The page's idle frame: the median frame while the app redraws (the mouse moving over the
 * view) with nothing computing. A software renderer's frame is far longer than a display's. */
async function idleFrame(page) {
  const from = await page.evaluate(() => window.poslabFrames.length);
  for (let k = 0; k < 30; k++) {
    await page.mouse.move(600 + k * 10, 300 + (k % 5) * 10);
    await page.waitForTimeout(50);
  }
  const gaps = (await frameGaps(page, from)).sort((a, b) => a - b);
  return Math.max(gaps[gaps.length >> 1] ?? 0, 1000 / 60);
}

/** Starts some work with `start`, waits until `done([job, count])` holds in the page, and
 * checks that no frame meanwhile took over 3x the idle frame, and that a Web Worker ran `job`. */
async function keepsDrawing(page, name, what, [job, count], start, done, place = "Web Worker", timeout = 300000) {
  const idle = await idleFrame(page);
  const from = await page.evaluate(() => window.poslabFrames.length);
  const since = await page.evaluate(() => performance.now());
  const started = Date.now();
  await start();
  const state = await waitForState(page, done, what, [job, count], timeout).catch((error) => ({ failed: String(error) }));
  const took = Date.now() - started;
  const gaps = await frameGaps(page, from);
  const longest = Math.max(...gaps);
  const ran = state.workers?.finished?.find(([finished]) => finished === job);
  check(state.failed === undefined, `${name}: ${what} (${state.failed ?? took + " ms"})`);
  check(ran !== undefined && ran[1] === place, `${name}: "${job}" ran on ${place} (workers: ${JSON.stringify(state.workers)})`);
  // The page's thread is what a job on it would hold: its longest busy stretch is the measure.
  // The gaps between frames are printed beside: a software GPU's process, sharing the
  // machine's cores with the worker, also delays frames that the page had ready.
  const busy = await longestTask(page, since);
  check(busy <= 3 * idle, `${name}: while ${what}, the page's thread was busy ${busy.toFixed(0)} ms at most, within 3x the idle frame (${idle.toFixed(0)} ms); ${gaps.length} frames, the longest gap ${longest.toFixed(0)} ms`);
  return state;
}

/** Whether `job` has finished more often than `count` times and nothing is computing. */
function finishedAgain([job, count]) {
  const state = window.poslabState;
  return state && !state.computing && state.workers.finished.filter(([f]) => f === job).length > count;
}

async function timesFinished(page, job) {
  const state = await page.evaluate(() => window.poslabState);
  return state.workers.finished.filter(([f]) => f === job).length;
}

/** The long jobs of the CPU engine run in Web Workers: the page keeps drawing while a column
 * of a 1,048,576 x 4096 table is reduced, the context lab computes at L' = 1,048,576, and a
 * 4096 x 4096 table dropped on the Check view is read, identified and drawn. */
async function pageKeepsDrawing(page, name, backend) {
  // The page shows the 1,048,576 x 4096 table (and the lab is set to L' = 1,048,576); a click
  // on its right, slow columns plots one.
  await watchFrames(page);
  let job = "sinusoidal-column";
  await keepsDrawing(page, name, "the column curve of a 1,048,576 x 4096 table computed",
    [job, await timesFinished(page, job)], () => page.mouse.click(1100, 400), finishedAgain,
    // With WebGPU the column is computed on the GPU and read back without waiting.
    backend === "WebGPU" ? "WebGPU" : "Web Worker");

  const state = await page.evaluate(() => window.poslabState);
  // A column of sines of one frequency over a million positions swings from near -1 to
  // near 1 (one read back as nothing would be flat at 0).
  const [low, high] = state.column_curve ?? [0, 0];
  check(low < -0.5 && high > 0.5, `${name}: the column curve spans ${low.toFixed(3)} .. ${high.toFixed(3)}`);
  const button = state.views.find((view) => view.label === "Context extension");
  check(button !== undefined, `${name}: the view list has "Context extension"`);
  if (button) {
    job = "context-lab";
    await keepsDrawing(page, name, "the context lab computed at L' = 1,048,576",
      [job, await timesFinished(page, job)], () => page.mouse.click(button.x, button.y), finishedAgain);
    const shot = await page.screenshot();
    writeFileSync(join(outDir, `${name}-context-1048576.png`), shot);
    // The map of unseen angles: extrapolated to 256x its training, a fifth of its cells are
    // unseen, so the map has both colours of 0 and 1 at least (point-sampled, just those; a
    // GPU's means, more). One colour is a reduction that read back nothing.
    const mapColours = coloursIn(shot, { x0: 920, y0: 170, x1: 1165, y1: 485 });
    check(mapColours >= 2, `${name}: the context lab's map of unseen angles draws them (${mapColours} colours)`);
  }

  // A 4096 x 4096 float32 .npy of the sinusoidal table (64 MB), made here, dropped on the page.
  const dropped = await page.evaluateHandle(() => {
    const [rows, dim] = [4096, 4096];
    let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${rows}, ${dim}), }`;
    header += " ".repeat(63 - ((10 + header.length) % 64)) + "\n";
    const preamble = new Uint8Array(10 + header.length);
    preamble.set([0x93, 78, 85, 77, 80, 89, 1, 0, header.length & 255, header.length >> 8]);
    for (let k = 0; k < header.length; k++) preamble[10 + k] = header.charCodeAt(k);
    const values = new Float32Array(rows * dim);
    for (let i = 0; i < dim / 2; i++) {
      const frequency = Math.pow(10000, -(2 * i) / dim);
      for (let p = 0; p < rows; p++) {
        values[p * dim + 2 * i] = Math.sin(p * frequency);
        values[p * dim + 2 * i + 1] = Math.cos(p * frequency);
      }
    }
    const transfer = new DataTransfer();
    transfer.items.add(new File([preamble, values], "sinusoidal_4096x4096.npy"));
    return transfer;
  });
  job = "check-outcome";
  const checked = await keepsDrawing(page, name, "a dropped 4096 x 4096 table identified",
    [job, await timesFinished(page, job)], async () => {
      await page.dispatchEvent("canvas", "dragover", { dataTransfer: dropped });
      await page.dispatchEvent("canvas", "drop", { dataTransfer: dropped });
    }, finishedAgain);
  check(checked.check && checked.check[1] === true, `${name}: the 4096 x 4096 table is identified: ${JSON.stringify(checked.check)}`);
  const pictured = (await page.evaluate(() => window.poslabState)).workers.finished.some(([f, w]) => f === "check-pictures" && w === "Web Worker");
  check(pictured, `${name}: a Web Worker drew the Check view's pictures`);
  writeFileSync(join(outDir, `${name}-check-4096.png`), await page.screenshot());
}

async function run(name, flags, backend) {
  console.log(`\n== ${name} ==`);
  const profile = mkdtempSync(join(tmpdir(), "poslab-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: browser,
    headless: true,
    args: [...BASE_FLAGS, ...flags],
    viewport: VIEWPORT,
  });
  const errors = [];
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    page.on("console", (message) => {
      // WebGPU's validation errors are console warnings: an invalid shader or pipeline is only
      // said there, and every dispatch of it silently reads back zeros.
      const webgpuError = message.type() === "warning"
        && /Error while parsing WGSL|\[Invalid [A-Za-z]+|While calling \[(Device|Queue)/.test(message.text());
      if (message.type() === "error" || webgpuError) errors.push(message.text().slice(0, 500));
      if (process.env.POSLAB_TEST_WARNINGS && message.type() === "warning") console.log(`warning: ${message.text().slice(0, 800)}`);
    });
    page.on("pageerror", (error) => errors.push(String(error)));
    const started = Date.now();
    await page.goto(url);
    let state = await waitForState(
      page,
      () => window.poslabState && window.poslabState.sinusoidal_drawn && !window.poslabState.computing,
      "the sinusoidal heatmap drawn",
    );
    const loaded = Date.now() - started;
    console.log(`engine: ${state.engine}`);
    console.log(`first picture: ${state.first_picture_ms?.toFixed(0)} ms after the page began loading (${loaded} ms until the test saw it)`);
    check(state.backend === backend, `${name}: the engine is ${backend} (status: "${state.engine}")`);
    check(state.view === "Sinusoidal table", `${name}: the app opens on the sinusoidal table`);
    check(state.error === null, `${name}: no error in the status bar (${state.error})`);
    // A frame or two for the texture to reach the screen.
    await page.waitForTimeout(300);
    let shot = await page.screenshot();
    writeFileSync(join(outDir, `${name}-sinusoidal.png`), shot);
    const heatmapColours = coloursIn(shot, CENTRAL);
    check(heatmapColours > 100, `${name}: the heatmap area has ${heatmapColours} colours (a heatmap has hundreds)`);

    for (const [label, file] of [["ALiBi", "alibi"], ["RoPE corkscrew (3D)", "corkscrew"]]) {
      const button = state.views.find((view) => view.label === label);
      check(button !== undefined, `${name}: the view list has "${label}"`);
      if (!button) continue;
      await page.mouse.click(button.x, button.y);
      const shown = await waitForState(
        page,
        (wanted) => window.poslabState && window.poslabState.view === wanted && !window.poslabState.computing,
        `the view "${label}" shown`,
        label,
      ).catch((error) => ({ failed: String(error) }));
      if (shown.failed) {
        check(false, `${name}: ${shown.failed}`);
        continue;
      }
      await page.waitForTimeout(500);
      shot = await page.screenshot();
      writeFileSync(join(outDir, `${name}-${file}.png`), shot);
      const colours = coloursIn(shot, CENTRAL);
      check(shown.view === label, `${name}: clicking "${label}" shows it`);
      check(shown.error === null, `${name}: no error in "${label}" (${shown.error})`);
      check(colours > 40, `${name}: "${label}" draws (${colours} colours in the view's area)`);
    }
    // The 3D scene's geometry was built in a Web Worker.
    const built = (await page.evaluate(() => window.poslabState)).workers.finished.find(([f]) => f === "corkscrew-scene");
    check(built && built[1] === "Web Worker", `${name}: the corkscrew's scene was built in a Web Worker (${JSON.stringify(built)})`);
    // A table dropped on the page opens in the Check view, read from the bytes the browser
    // hands over: the sinusoidal table of 16 positions and 8 dimensions, written here.
    const csv = [];
    for (let p = 0; p < 16; p++) {
      const row = [];
      for (let i = 0; i < 4; i++) {
        const angle = p / Math.pow(10000, (2 * i) / 8);
        row.push(String(Math.sin(angle)), String(Math.cos(angle)));
      }
      csv.push(row.join(","));
    }
    const dropped = await page.evaluateHandle((text) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([text + "\n"], "sinusoidal_16x8.csv", { type: "text/csv" }));
      return transfer;
    }, csv.join("\n"));
    await page.dispatchEvent("canvas", "dragover", { dataTransfer: dropped });
    await page.dispatchEvent("canvas", "drop", { dataTransfer: dropped });
    const checked = await waitForState(
      page,
      () => window.poslabState && window.poslabState.check && !window.poslabState.computing,
      "the dropped table checked",
    ).catch((error) => ({ failed: String(error) }));
    check(checked.view === "Check a table", `${name}: a dropped table opens the Check view (${checked.view ?? checked.failed})`);
    check(checked.check && checked.check[1] === true, `${name}: the dropped sinusoidal table is identified: ${JSON.stringify(checked.check)}`);
    await page.waitForTimeout(300);
    writeFileSync(join(outDir, `${name}-check.png`), await page.screenshot());

    // Ctrl+S saves the view's figure: on the web, a download.
    const downloading = page.waitForEvent("download", { timeout: 30000 });
    await page.mouse.click(700, 500);
    await page.keyboard.press("Control+s");
    const download = await downloading.catch((error) => ({ failed: String(error) }));
    if (download.failed) {
      check(false, `${name}: Ctrl+S downloads the figure (${download.failed})`);
    } else {
      const path = await download.path();
      const text = (await import("node:fs")).readFileSync(path, "utf8");
      check(
        download.suggestedFilename().endsWith(".svg") && text.includes("<svg"),
        `${name}: Ctrl+S downloads ${download.suggestedFilename()} (${text.length} bytes of SVG)`,
      );
    }

    // F5 presents, as on the desktop: the page keeps it from reloading; F5 again leaves.
    await page.evaluate(() => {
      window.poslabNotReloaded = true;
      // In the capture phase, after the page's own listener (the app stops the key's bubbling).
      window.poslabF5 = new Promise((resolve) => window.addEventListener("keydown", (event) => {
        if (event.key === "F5") resolve(event.defaultPrevented);
      }, { capture: true }));
    });
    await page.keyboard.press("F5");
    const presenting = await waitForState(
      page,
      () => window.poslabState && window.poslabState.present,
      "F5 presenting",
    ).catch((error) => ({ failed: String(error) }));
    const kept = await page.evaluate(() => Promise.race([
      window.poslabF5.then((prevented) => window.poslabNotReloaded === true && prevented === true),
      new Promise((resolve) => setTimeout(() => resolve("no keydown seen"), 5000)),
    ]));
    check(presenting.present === true && kept === true, `${name}: F5 presents and does not reload the page (${presenting.failed ?? "prevented: " + kept})`);
    await page.keyboard.press("F5");
    const desk = await waitForState(
      page,
      () => window.poslabState && !window.poslabState.present,
      "F5 again",
    ).catch((error) => ({ failed: String(error) }));
    check(desk.present === false, `${name}: F5 again leaves presentation mode (${desk.failed ?? "ok"})`);
    // Left before presentation's zoom had taken effect, the desk's zoom still comes back.
    const unzoomed = await waitForState(
      page,
      () => window.poslabState && window.poslabState.zoom === 1,
      "the desk's zoom back",
      null,
      5000,
    ).catch((error) => ({ failed: String(error) }));
    check(unzoomed.zoom === 1, `${name}: leaving presentation mode gives the zoom back (${unzoomed.failed ? "zoom " + (await page.evaluate(() => window.poslabState.zoom)) : "1"})`);

    // The settings persist in the browser's storage: saved when the page loses focus, they
    // are there after a reload.
    const lastView = await page.evaluate(() => window.poslabState.view);
    await page.evaluate(() => document.activeElement && document.activeElement.blur());
    await page.waitForTimeout(300);
    await page.reload();
    const reloaded = await waitForState(
      page,
      () => window.poslabState && !window.poslabState.computing,
      "the page reloaded",
    ).catch((error) => ({ failed: String(error) }));
    check(reloaded.view === lastView, `${name}: after a reload the page opens on "${lastView}" again (${JSON.stringify(reloaded).slice(0, 300)})`);
    // A link opens on the settings it names, as `poslab app` does: a million positions of 4096
    // dimensions, 2^32 cells, more than the page's 32-bit usize counts.
    await page.goto(`${url}?view=sinusoidal&seq=1048576&dim=4096&target=1048576`);
    const million = await waitForState(
      page,
      () => window.poslabState && window.poslabState.sinusoidal_drawn && !window.poslabState.computing,
      "the 1,048,576 x 4096 table from a link",
      null,
      120000,
    ).catch((error) => ({ failed: String(error) }));
    check(!million.failed && million.error === null, `${name}: a link opens the 1,048,576 x 4096 sinusoidal table and draws it (${million.failed ?? million.error})`);
    await page.waitForTimeout(300);
    writeFileSync(join(outDir, `${name}-million.png`), await page.screenshot());
    if (million.failed === undefined) {
      await pageKeepsDrawing(page, name, backend);
    }
    await page.goto(`${url}?dim=7`);
    const bad = await waitForState(
      page,
      () => window.poslabState && window.poslabState.error,
      "a bad link's message",
    ).catch((error) => ({ failed: String(error) }));
    check(typeof bad.error === "string" && bad.error.includes("--dim 7"), `${name}: a link with a bad value says so: "${bad.error ?? bad.failed}"`);

    check(errors.length === 0, `${name}: no console error${errors.length ? ": " + errors.join(" | ") : ""}`);
    return state;
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

// The folder is a Hugging Face static Space as it is, and its files are served with the types
// a browser needs.
try {
  const readme = await (await fetch(`${url}README.md`)).text();
  check(/^---\n[\s\S]*\nsdk: static\n[\s\S]*\n---\n/.test(readme), "the folder's README.md has a static Space's header");
  const worker = await fetch(`${url}worker.js`);
  check(/javascript/.test(worker.headers.get("content-type") ?? ""), `worker.js is served as JavaScript (${worker.headers.get("content-type")}): a module worker needs it`);
  const wasm = await fetch(`${url}poslab_web_bg.wasm`);
  check(wasm.headers.get("content-type") === "application/wasm", `the .wasm is served as application/wasm (${wasm.headers.get("content-type")})`);
} catch (error) {
  check(false, `the folder's files are served: ${error}`);
}

/** A host without worker.js: the page still works, its jobs run on the page, and it says why. */
async function withoutWorkers() {
  console.log("\n== without worker.js ==");
  const profile = mkdtempSync(join(tmpdir(), "poslab-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: browser, headless: true, args: BASE_FLAGS, viewport: VIEWPORT,
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${url}no-worker/?view=corkscrew`);
    const state = await waitForState(
      page,
      () => window.poslabState && window.poslabState.workers.finished.length > 0 && !window.poslabState.computing,
      "the corkscrew built without workers",
    ).catch((error) => ({ failed: String(error) }));
    const built = state.workers?.finished?.find(([f]) => f === "corkscrew-scene");
    check(built && built[1] === "page", `without worker.js: the corkscrew's scene is built on the page (${JSON.stringify(state.workers ?? state.failed)})`);
    check(typeof state.workers?.unavailable === "string", `without worker.js: the page says why jobs run on it ("${state.workers?.unavailable}")`);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

try {
  await run("webgpu", WEBGPU_FLAGS, "WebGPU");
  await run("webgl2", [], "CPU");
  await withoutWorkers();
} catch (error) {
  failures.push(String(error));
  console.log(`FAIL ${error}`);
}
if (failures.length) {
  console.log(`\n${failures.length} check(s) failed`);
  process.exit(1);
}
console.log("\nall checks passed");
