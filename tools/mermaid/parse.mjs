// Parse Mermaid text (stdin) with mermaid's own parser; jsdom gives DOMPurify the window it needs in node.
import { JSDOM } from "jsdom";
import { readFileSync } from "node:fs";
const { window } = new JSDOM("");
globalThis.window = window;
globalThis.document = window.document;
const { default: mermaid } = await import("mermaid");
const text = readFileSync(0, "utf8");
try {
  const r = await mermaid.parse(text);
  console.log(JSON.stringify({ ok: true, type: r.diagramType }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e.message || e).slice(0, 500) }));
  process.exitCode = 1;
}
