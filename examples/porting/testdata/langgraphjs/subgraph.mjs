import {
  Annotation,
  Command,
  END,
  MemorySaver,
  START,
  StateGraph,
  interrupt,
} from "@langchain/langgraph";

const State = Annotation.Root({
  draft: Annotation(),
  approved: Annotation(),
  log: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

const note = (text) => async (s) => ({ log: [`${text} ${s.draft}`] });
const ask = async (s) => {
  const ok = interrupt(`approve ${s.draft}?`);
  return { approved: ok, log: [`approved: ${ok}`] };
};
const write = async () => ({ draft: "post v1", log: ["wrote post v1"] });

const review = new StateGraph(State)
  .addNode("check", note("checked"))
  .addNode("ask", ask)
  .addEdge(START, "check")
  .addEdge("check", "ask")
  .addEdge("ask", END)
  .compile();
const graph = new StateGraph(State)
  .addNode("write", write)
  .addNode("review", async (s) => {
    const out = await review.invoke(s);
    return { approved: out.approved, log: out.log.slice(s.log.length) };
  })
  .addNode("publish", note("published"))
  .addEdge(START, "write")
  .addEdge("write", "review")
  .addEdge("review", "publish")
  .addEdge("publish", END)
  .compile({ checkpointer: new MemorySaver() });

const config = { configurable: { thread_id: "thread-1" } };
const first = await graph.invoke({}, config);
console.log("waiting:", JSON.stringify(first.__interrupt__[0].value));
const res = await graph.invoke(new Command({ resume: true }), config);
for (const l of res.log) console.log(l);
