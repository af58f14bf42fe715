// The page's part of the live view (its stylesheet, Pin's script) comes from the kernel by
// message, once per page and version: a widget's synced state is saved with the notebook, once
// per cell, and the assets would have been half of a cell's saved bytes. A widget with no
// kernel behind it never gets an answer, and is not shown (the static twin is). Saved without
// its comment lines and indentation: no comment at the end of a line.
const LOADED = (globalThis.__reasoningNbAssets ??= {});

function ask(model) {
  return new Promise((resolve) => {
    model.on("msg:custom", (msg) => msg?.type === "assets" && resolve(msg));
    model.send({ type: "assets" });
  });
}

// The assets' script puts their stylesheet in the page (the fewer bytes here, the fewer saved).
async function load(assets) {
  const url = URL.createObjectURL(new Blob([assets.js], { type: "text/javascript" }));
  try {
    const parts = await import(url);
    parts.install(assets);
    return parts;
  } finally {
    URL.revokeObjectURL(url);
  }
}

export default {
  async render({ model, el }) {
    const version = model.get("version");
    // (views made once the assets are here ask not)
    LOADED[version] ??= await ask(model).then(load);
    return LOADED[version][model.get("part")]?.({ model, el });
  },
};
