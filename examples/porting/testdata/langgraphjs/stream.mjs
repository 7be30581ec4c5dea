import { Annotation, END, START, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({
  results: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const worker = (name, ms) => async () => {
  await sleep(ms);
  return { results: [name] };
};
const join = async (s) => ({ results: [`joined ${s.results.length}`] });

const graph = new StateGraph(State)
  .addNode("slow", worker("slow", 300))
  .addNode("fast", worker("fast", 10))
  .addNode("join", join)
  .addEdge(START, "slow")
  .addEdge(START, "fast")
  .addEdge("slow", "join")
  .addEdge("fast", "join")
  .addEdge("join", END)
  .compile();

for await (const chunk of await graph.stream({}, { streamMode: "updates" })) {
  for (const [node, update] of Object.entries(chunk)) {
    console.log(node, `[${update.results.join(" ")}]`);
  }
}
