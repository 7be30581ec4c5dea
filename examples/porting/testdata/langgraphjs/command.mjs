import {
  Annotation,
  Command,
  END,
  START,
  StateGraph,
} from "@langchain/langgraph";

const State = Annotation.Root({ text: Annotation(), route: Annotation() });

const triage = async (s) => {
  const next = s.text.includes("TODO") ? "edit" : "publish";
  return new Command({ update: { route: `triage -> ${next}` }, goto: next });
};
const edit = async (s) => ({ text: s.text.replaceAll("TODO", "done") });
const publish = async (s) => ({ route: `${s.route} -> publish` });

const graph = new StateGraph(State)
  .addNode("triage", triage, { ends: ["edit", "publish"] })
  .addNode("edit", edit)
  .addNode("publish", publish)
  .addEdge(START, "triage")
  .addEdge("edit", "publish")
  .addEdge("publish", END)
  .compile();

for (const text of ["intro TODO", "final"]) {
  const res = await graph.invoke({ text });
  console.log(res.route, "|", res.text);
}
