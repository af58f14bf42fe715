// The page's part of the live view (its stylesheet, Pin's script) comes from the kernel by
// message, once per page and version: a widget's synced state is saved with the notebook, once
// per cell, and the kit would have been half of a cell's saved bytes. A widget without a
// kernel behind it gets no kit; it is not shown then (the static twin is).
const KITS = (globalThis.__reasoningNbKits ??= new Map());
const PATIENCE_MS = 15000;

function ask(model) {
  return new Promise((resolve, reject) => {
    const done = (msg) => {
      if (msg?.type !== "kit") return;
      clearTimeout(timer);
      model.off("msg:custom", done);
      resolve(msg);
    };
    const timer = setTimeout(() => {
      model.off("msg:custom", done);
      reject(new Error("no kernel behind this widget"));
    }, PATIENCE_MS);
    model.on("msg:custom", done);
    model.send({ type: "kit" });
  });
}

async function install({ version, css, js }) {
  const style = document.createElement("style");
  style.dataset.reasoningNb = version;
  style.textContent = css;
  document.head.append(style);
  const url = URL.createObjectURL(new Blob([js], { type: "text/javascript" }));
  try {
    return await import(url);
  } finally {
    URL.revokeObjectURL(url);
  }
}

function kit(model) {
  const version = model.get("version");
  if (!KITS.has(version)) {
    const loading = ask(model).then(install);
    loading.catch(() => KITS.delete(version)); // (the next widget asks again)
    KITS.set(version, loading);
  }
  return KITS.get(version);
}

export default {
  async render({ model, el }) {
    const parts = await kit(model);
    return parts[model.get("part")]?.({ model, el });
  },
};
