import {
  Command,
  MemorySaver,
  entrypoint,
  interrupt,
  task,
} from "@langchain/langgraph";

let charges = 0;
const charge = task("charge", async (amount) => {
  charges++;
  return `receipt for ${amount}`;
});

const order = entrypoint(
  { name: "order", checkpointer: new MemorySaver() },
  async (amount) => {
    const receipt = await charge(amount);
    const ship = interrupt(`ship ${receipt}?`);
    return ship ? `shipped with ${receipt}` : "kept";
  },
);

const config = { configurable: { thread_id: "thread-1" } };
await order.invoke(42, config);
const res = await order.invoke(new Command({ resume: true }), config);
console.log(res, "charges:", charges);
