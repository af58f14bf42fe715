// The live view and the kernel behind it: its controls go dead with the kernel, and the
// notebook saves the run's static output without the live view (whose widget would be missing).
//
// `SESSION` (the saved output's keys, the live roots, ipywidgets' class on a view whose comm is
// gone, what a dead view says) comes from the kernel's modules: `assets` puts it before this
// script, and `pin.js` after it (one module).
const LOST = new Set(["dead", "autorestarting", "restarting"]); // the widgets' comms went too
const SEEN = new WeakSet(); // the widget managers and notebook models followed already

// A widget manager's models lose their comms with its kernel. ipywidgets 8.1 disconnects them
// when the kernel restarts (asked, or after a death), not when it is shut down or changed: the
// controls would go on changing and sending to nothing. Its own `disconnect` marks every view.
function followKernel(manager) {
  const session = manager?.context?.sessionContext; // (Lab 4.6, Notebook 7.6: see host.py)
  if (!session || SEEN.has(manager) || typeof manager.disconnect !== "function") return;
  SEEN.add(manager);
  const lost = () => manager.isDisposed || manager.disconnect();
  session.statusChanged.connect((_, status) => LOST.has(status) && lost());
  session.kernelChanged.connect((_, change) => change.oldValue && lost());
}

// A view whose kernel is gone: no control in it reacts (the page styles it as dead too).
function deaden(root) {
  if (!root.classList.contains(SESSION.gone)) return;
  root.querySelectorAll("select, button").forEach((control) => (control.disabled = true));
  root.title = SESSION.dead;
}

// One live %%think output of a cell is view-only: nothing but the widget (and an empty text).
function viewOnly(output) {
  const data = output?.data ?? {};
  const plain = [data["text/plain"] ?? ""].flat().join("");
  const keys = Object.keys(data);
  return (
    output?.output_type === "display_data" &&
    !!data[SESSION.view]?.model_id &&
    keys.every((key) => key === SESSION.view || key === "text/plain") &&
    !plain.trim()
  );
}

// The ids of the models `roots` reach in the saved widget state (they refer to each other as
// "IPY_MODEL_<id>").
function reach(state, roots) {
  const seen = new Set();
  const todo = [...roots];
  while (todo.length) {
    const id = todo.pop();
    if (seen.has(id) || !state[id]) continue;
    seen.add(id);
    JSON.stringify(state[id]).replace(/IPY_MODEL_(\w+)/g, (_, ref) => todo.push(ref));
  }
  return seen;
}

// The saved state without a model that names one it lacks: restored, such a model fails with
// "widget model not found" (a model a dropped view left behind may share one with it), so it
// goes too, and so on until every model left names only models left.
function restorable(entries) {
  const state = Object.fromEntries(entries);
  for (let changed = true; changed; ) {
    changed = false;
    for (const [id, model] of Object.entries(state)) {
      const refs = [...JSON.stringify(model).matchAll(/IPY_MODEL_(\w+)/g)].map((m) => m[1]);
      if (refs.some((ref) => !state[ref])) {
        delete state[id];
        changed = true;
      }
    }
  }
  return state;
}

// The notebook as saved: a live view followed by the static output of its run is left out
// (reopened, it has no widget to show, and the static output shows the run), and so is the
// saved state only such views reached.
function lean(nb) {
  const dropped = [];
  const kept = [];
  const cells = (nb.cells ?? []).map((cell) => {
    if (!Array.isArray(cell.outputs)) return cell;
    const outputs = cell.outputs.filter((output, k) => {
      const view = output?.data?.[SESSION.view]?.model_id;
      const drop = viewOnly(output) && !!cell.outputs[k + 1]?.metadata?.[SESSION.trace];
      if (view) (drop ? dropped : kept).push(view);
      return !drop;
    });
    return outputs.length === cell.outputs.length ? cell : { ...cell, outputs };
  });
  const widgets = nb.metadata?.widgets;
  const state = widgets?.[SESSION.state]?.state;
  if (!dropped.length) return nb;
  const metadata = { ...nb.metadata };
  if (state) {
    const keep = reach(state, kept);
    const gone = reach(state, dropped);
    const left = restorable(
      Object.entries(state).filter(([id]) => keep.has(id) || !gone.has(id)),
    );
    if (Object.keys(left).length) {
      const saved = { ...widgets[SESSION.state], state: left };
      metadata.widgets = { ...widgets, [SESSION.state]: saved };
    } else {
      delete metadata.widgets;
    }
  }
  return { ...nb, cells, metadata };
}

// Every save of the notebook (Lab 4.6 and Notebook 7.6 save `context.model.toJSON()`) goes
// through `lean`; the notebook on screen keeps its live views.
function saveLean(notebook) {
  if (!notebook || SEEN.has(notebook) || typeof notebook.toJSON !== "function") return;
  SEEN.add(notebook);
  const whole = notebook.toJSON.bind(notebook);
  notebook.toJSON = () => lean(whole());
}

// What each view of the live view does (the loader calls it, or `pin`).
export function follow({ model, el }) {
  const manager = model.widget_manager;
  followKernel(manager);
  try {
    saveLean(manager?.context?.model);
  } catch {
    // (a host without a notebook model: nothing is saved by the page)
  }
  const watch = new MutationObserver((changes) => deaden(changes[0].target));
  let frames = 600; // (a view is put in the page after it rendered: wait for that, a while)
  const start = () => {
    const root = el.isConnected && el.closest(SESSION.roots);
    if (root) {
      watch.observe(root, { attributes: true, attributeFilter: ["class"] });
      deaden(root);
    } else if (frames-- > 0) {
      requestAnimationFrame(start);
    }
  };
  start();
  return () => {
    frames = 0;
    watch.disconnect();
  };
}

export const style = follow;
