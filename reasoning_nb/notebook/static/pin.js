// Pin: what is selected in this %%think widget, reasoning or answer (with nothing selected, all
// of the reasoning, or the answer of a run with none), goes into a new markdown cell below the
// widget's cell. This side says where the selection lies; the kernel holds the markdown each
// Output shows, so it pins the source (math and formatting as the model wrote them) and escapes
// model text in one place. Then this side places the cell.
//
// The live view's selectors and class names come from the kernel's style module: it puts
// `const CSS = {...};` before this script when it sends it (after `session.js`, whose `follow`
// each view calls).
const { root: ROOT, panes: PANES, text: TEXT, twin: TWIN, twinPanes: TWIN_PANES } = CSS;
const OUTPUT = ".widget-output"; // one ipywidgets Output, in the pane's order
const RENDERED = ".jp-RenderedMarkdown"; // its markdown, drawn by the front end
const NOTES = {
  inserted: "pinned below",
  copied: "copied: paste it into a markdown cell",
  failed: "could not place it: select the text and copy it by hand",
  silent: "no answer from the kernel: run the cell again to pin from it",
  rewritten: "cell line updated",
  unchanged: "could not edit the cell: copy the line from the output",
};
const LABELS = {
  selection: [
    " Pin selection",
    "Copy the selected text, as the model wrote it (markdown), into a new markdown cell below",
  ],
  reasoning: [
    " Pin reasoning",
    "Copy all of the reasoning into a new markdown cell below (select text to pin just that)",
  ],
  answer: [" Pin answer", "Copy the answer into a new markdown cell below"],
};
const PATIENCE_MS = 4000; // the kernel answers at once unless it is gone or stuck

// The part of `range` inside `node`.
function clip(range, node) {
  const part = range.cloneRange();
  const whole = document.createRange();
  whole.selectNodeContents(node);
  if (part.compareBoundaryPoints(Range.START_TO_START, whole) < 0) {
    part.setStart(whole.startContainer, whole.startOffset);
  }
  if (part.compareBoundaryPoints(Range.END_TO_END, whole) > 0) {
    part.setEnd(whole.endContainer, whole.endOffset);
  }
  return part;
}

// Does `range` select any text of `node`? (MathJax keeps a copy of each formula as text.)
function meets(range, node) {
  return range.intersectsNode(node) && clip(range, node).toString().trim() !== "";
}

// The run's panes on screen, reasoning first: the widget's, or the static twin's (the output
// after the widget's) once the widget shows no text. Each with how its blocks are found.
function panes(el) {
  const root = el.closest(ROOT);
  if (!root) return [];
  if (root.querySelector(TEXT)) {
    return Object.entries(PANES).map(([name, css]) => ({
      name,
      pane: root.querySelector(css),
      outputs: (pane) => [...pane.querySelectorAll(OUTPUT)],
      blocks: (output) => [...(output.querySelector(RENDERED)?.children ?? [])],
    }));
  }
  const twin = root.closest(".jp-OutputArea-child")?.nextElementSibling?.querySelector(TWIN);
  return Object.entries(TWIN_PANES).map(([name, css]) => ({
    name,
    pane: twin?.querySelector(css),
    outputs: (pane) => [pane],
    blocks: (output) => [...output.children],
    twin: true,
  }));
}

// Is `pane` on screen? (A closed <details> keeps boxes for its content.)
function open(pane) {
  return !!pane?.getClientRects().length && !pane.closest("details:not([open])");
}

// The panes that the selection meets, with its range. A closed pane is left out: a range
// holds the text of hidden nodes too.
function touched(el) {
  const selection = document.getSelection();
  if (!selection?.rangeCount || selection.isCollapsed) return [];
  const range = selection.getRangeAt(0);
  return panes(el)
    .map((part) => ({ ...part, range }))
    .filter(({ pane }) => open(pane) && meets(range, pane));
}

// Where the selection lies in one pane: the first and last top-level rendered block it meets,
// each as [Output index, child index], the number of such blocks in each Output from the
// first's to the last's, and the selected text (only the text where the page draws markdown
// in some other way). In the twin, the pane is one "Output" of the kernel's own HTML.
function whereIn({ name, range, pane, outputs: find, blocks, twin }) {
  const outputs = find(pane);
  const hits = [];
  outputs.forEach((output, o) => {
    if (!range.intersectsNode(output)) return;
    blocks(output).forEach((child, k) => meets(range, child) && hits.push([o, k]));
  });
  const text = clip(range, pane).toString();
  if (!hits.length) return { pane: name, text };
  const from = hits[0];
  const to = hits[hits.length - 1];
  const counts = outputs.slice(from[0], to[0] + 1).map((output) => blocks(output).length);
  return { pane: name, from, to, counts, text, ...(twin && { static: true }) };
}

// Where the widget's cell is in the notebook model: by the id the kernel saw while the cell
// ran, else by the cell's place on screen.
function cellIndex(cells, cellId, el) {
  const byId = cells.findIndex((c) => c.id === cellId);
  if (byId >= 0) return byId;
  const onScreen = el.closest(".jp-Cell")?.getAttribute("data-windowed-list-index");
  return onScreen == null ? cells.length - 1 : Number(onScreen);
}

// JupyterLab and Notebook 7 (checked on Lab 4.6, Notebook 7.6; a private path, the one hook of
// the host in the page: see host.py): the widget manager knows the notebook's document.
function notebookOf(model) {
  try {
    return model.widget_manager?.context?.model?.sharedModel ?? null;
  } catch {
    return null;
  }
}

// "Use these flags": the kernel's line in place of the cell's first line, if still a %%think one.
function rewrite(model, el) {
  const line = model.get("line");
  const cells = notebookOf(model)?.cells ?? [];
  const cell = cells[cellIndex(cells, model.get("cell_id"), el)];
  const source = cell?.getSource() ?? "";
  if (!line || !source.startsWith("%%think")) return "unchanged";
  cell.setSource(source.replace(/^.*/, () => line)); // (a function: "$" in it stays)
  return "rewritten";
}

async function place(model, el, cells) {
  const notebook = notebookOf(model);
  if (notebook?.insertCell) {
    const all = notebook.cells;
    let at = cellIndex(all, model.get("cell_id"), el) + 1;
    while (at < all.length && all[at].getMetadata?.("reasoning_nb_pin")) at += 1; // in order
    cells.forEach(({ markdown, metadata }, k) =>
      notebook.insertCell(at + k, { cell_type: "markdown", source: markdown, metadata }),
    );
    return "inserted";
  }
  try {
    await navigator.clipboard.writeText(cells.map((c) => c.markdown).join("\n\n"));
    return "copied";
  } catch {
    return "failed";
  }
}

// The stylesheet into the page, once per page and version (the loader calls it).
export function install({ version, css }) {
  if (!document.querySelector(`style[data-reasoning-nb="${version}"]`)) {
    const sheet = document.createElement("style");
    sheet.dataset.reasoningNb = version;
    sheet.textContent = css;
    document.head.append(sheet);
  }
}

export function pin({ model, el }) {
  const unfollow = follow({ model, el });
  const button = document.createElement("button");
  button.className = "jupyter-button widget-button";
  const icon = document.createElement("i");
  icon.className = "fa fa-thumb-tack"; // Font Awesome 4, as ipywidgets' own button icons
  const label = document.createTextNode("");
  button.append(icon, label);
  const flags = document.createElement("button");
  flags.className = button.className;
  flags.textContent = "Use these flags";
  const note = document.createElement("span");
  note.className = CSS.noteClass;
  el.append(button, flags, note);
  // Idle (hidden) until the kernel offers Pin; "Use these flags" shows while the kernel offers
  // a line: the run's flags are not the cell's.
  const sync = () => {
    el.classList.toggle(CSS.idleClass, !model.get("offered"));
    flags.style.display = model.get("line") ? "" : "none";
  };
  sync();
  model.on("change:line", sync);
  model.on("change:offered", sync);
  flags.addEventListener("click", () => {
    const how = rewrite(model, el);
    note.textContent = NOTES[how];
    model.send({ type: "placed", how });
  });
  // The button says what a click pins: the selection, else all of the reasoning, if any.
  const relabel = () => {
    const whole = panes(el)[0]?.pane ? "reasoning" : "answer";
    [label.data, button.title] = LABELS[touched(el).length ? "selection" : whole];
  };
  relabel();
  requestAnimationFrame(relabel); // (once the widget is in the page: it may hold a reasoning pane)
  document.addEventListener("selectionchange", relabel);
  button.addEventListener("pointerenter", relabel); // (the run on screen may have changed)
  // A press on a button would clear the selection before the click reads it.
  button.addEventListener("mousedown", (event) => event.preventDefault());
  let waiting = null;
  button.addEventListener("click", () => {
    const parts = touched(el).map(whereIn);
    note.textContent = "";
    clearTimeout(waiting);
    waiting = setTimeout(() => (note.textContent = NOTES.silent), PATIENCE_MS);
    try {
      model.send({ type: "pin", parts });
    } catch {
      note.textContent = NOTES.silent; // no kernel behind this widget any more
    }
  });
  const onMessage = async (msg) => {
    if (msg?.type !== "cells" || !Array.isArray(msg.cells)) return;
    clearTimeout(waiting);
    const how = await place(model, el, msg.cells);
    note.textContent = NOTES[how];
    model.send({ type: "placed", how });
  };
  model.on("msg:custom", onMessage);
  return () => {
    unfollow();
    clearTimeout(waiting);
    document.removeEventListener("selectionchange", relabel);
    model.off("msg:custom", onMessage);
    model.off("change:line", sync);
    model.off("change:offered", sync);
  };
}

