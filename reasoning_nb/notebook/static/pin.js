// Pin: the reasoning selected in this %%think widget (or all of it, with nothing selected) goes
// into a new markdown cell below the widget's cell. The kernel writes the cell's markdown (so
// model text is escaped in one place); this side reads the selection and places the cell.
const ROOT = ".reasoning-nb-live";
const THOUGHTS = ".reasoning-nb-thoughts";
const NOTES = {
  inserted: "pinned below",
  copied: "copied: paste it into a markdown cell",
  failed: "could not place it: select the text and copy it by hand",
  silent: "no answer from the kernel: run the cell again to pin from it",
};
const PATIENCE_MS = 4000; // the kernel answers at once unless it is gone or stuck

// The part of `range` inside the shown run's reasoning ("" when they do not meet).
function clip(range, el) {
  const pane = el.closest(ROOT)?.querySelector(THOUGHTS);
  if (!pane || range.collapsed || !range.intersectsNode(pane)) return "";
  const part = range.cloneRange();
  if (!pane.contains(part.startContainer)) part.setStart(pane, 0);
  if (!pane.contains(part.endContainer)) part.setEnd(pane, pane.childNodes.length);
  return part.toString();
}

// Where the widget's cell is in the notebook model: by the id the kernel saw while the cell
// ran, else by the cell's place on screen.
function cellIndex(cells, cellId, el) {
  const byId = cells.findIndex((c) => c.id === cellId);
  if (byId >= 0) return byId;
  const onScreen = el.closest(".jp-Cell")?.getAttribute("data-windowed-list-index");
  return onScreen == null ? cells.length - 1 : Number(onScreen);
}

async function place(model, el, markdown, metadata) {
  let notebook = null;
  try {
    // JupyterLab and Notebook 7: the widget manager knows the notebook's document.
    notebook = model.widget_manager?.context?.model?.sharedModel ?? null;
  } catch {
    notebook = null;
  }
  if (notebook?.insertCell) {
    const cells = notebook.cells;
    let at = cellIndex(cells, model.get("cell_id"), el) + 1;
    while (at < cells.length && cells[at].getMetadata?.("reasoning_nb_pin")) at += 1; // in order
    notebook.insertCell(at, { cell_type: "markdown", source: markdown, metadata });
    return "inserted";
  }
  try {
    await navigator.clipboard.writeText(markdown);
    return "copied";
  } catch {
    return "failed";
  }
}

function render({ model, el }) {
  const button = document.createElement("button");
  button.className = "jupyter-button widget-button";
  const icon = document.createElement("i");
  icon.className = "fa fa-thumb-tack"; // Font Awesome 4, as ipywidgets' own button icons
  button.append(icon, " Pin");
  button.title = "Copy the selected reasoning (or all of it) into a new markdown cell below";
  const note = document.createElement("span");
  note.className = "reasoning-nb-pin-note";
  el.append(button, note);
  // A press on a button would clear the selection before the click reads it.
  button.addEventListener("mousedown", (event) => event.preventDefault());
  let waiting = null;
  button.addEventListener("click", () => {
    const selection = document.getSelection();
    const text = selection?.rangeCount ? clip(selection.getRangeAt(0), el) : "";
    note.textContent = "";
    clearTimeout(waiting);
    waiting = setTimeout(() => (note.textContent = NOTES.silent), PATIENCE_MS);
    try {
      model.send({ type: "pin", text });
    } catch {
      note.textContent = NOTES.silent; // no kernel behind this widget any more
    }
  });
  const onMessage = async (msg) => {
    if (msg?.type !== "cell") return;
    clearTimeout(waiting);
    const how = await place(model, el, msg.markdown, msg.metadata);
    note.textContent = NOTES[how];
    model.send({ type: "placed", how });
  };
  model.on("msg:custom", onMessage);
  return () => {
    clearTimeout(waiting);
    model.off("msg:custom", onMessage);
  };
}

export default { render };
