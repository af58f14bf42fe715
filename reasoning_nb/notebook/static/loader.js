// The page's part of the live view (its stylesheet, Pin's script) comes from the kernel by
// message, once per page and version: a widget's synced state is saved with the notebook, once
// per cell, and the kit would have been half of a cell's saved bytes. A widget with no kernel
// behind it never gets an answer, and is not shown (the static twin is).
const KITS = (globalThis.__reasoningNbKits ??= {});

function ask(model) {
  return new Promise((resolve) => {
    model.on("msg:custom", (msg) => msg?.type === "kit" && resolve(msg));
    model.send({ type: "kit" });
  });
}

// The kit's script puts its stylesheet in the page (the fewer bytes here, the fewer saved).
async function load(kit) {
  const url = URL.createObjectURL(new Blob([kit.js], { type: "text/javascript" }));
  try {
    const parts = await import(url);
    parts.install(kit);
    return parts;
  } finally {
    URL.revokeObjectURL(url);
  }
}

export default {
  async render({ model, el }) {
    const version = model.get("version");
    KITS[version] ??= await ask(model).then(load); // (views made once it is here ask not)
    return KITS[version][model.get("part")]?.({ model, el });
  },
};
